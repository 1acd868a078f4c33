// Package export prepares accounts' data exports: a job of the export
// queue (run by the fan-out queue's worker, internal/fanout, on a stream
// of its own) reads everything an account holds, in bounded batches, and
// streams it as a zip of JSON files and the account's media into the
// blob store. The archive holds the account's own data only: nothing in
// it is filtered by audience.
package export

import (
	"archive/zip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path"
	"time"

	"github.com/socialgw/gateway/internal/social"
)

// Source reads an account's data in batches (redisstore.ExportService).
type Source interface {
	ExportProfile(ctx context.Context, userID string) (*social.User, error)
	// ExportEntries reads a batch of about n entries of a part from
	// cursor ("" to start) and the next cursor ("" after the last).
	ExportEntries(ctx context.Context, userID string, part social.ExportPart, cursor string, n int) ([]social.ExportEntry, string, error)
	ExportUsers(ctx context.Context, ids []string) ([]*social.User, error)
	ExportPosts(ctx context.Context, userID string, ids []string) ([]*social.Post, error)
	ExportComments(ctx context.Context, ids []string) ([]*social.Comment, error)
	ExportLikes(ctx context.Context, userID string, entries []social.ExportEntry) ([]social.ExportEntry, error)
	ExportLists(ctx context.Context, userID string) ([]social.ExportList, error)
	ExportNotifications(ctx context.Context, userID, after string, n int) ([]*social.Notification, string, error)
}

// Records keeps the exports' records (redisstore.ExportService).
type Records interface {
	LatestExport(ctx context.Context, userID string) (*social.DataExport, error)
	SettleExport(ctx context.Context, userID, id string, bytes int64) error
}

// Files is the blob store: the archives, and the posts' media files they
// copy (mediastore.Store).
type Files interface {
	WriteExport(ctx context.Context, userID string, fill func(io.Writer) error) (int64, error)
	Open(ctx context.Context, key string) (io.ReadSeekCloser, error)
}

// DefaultBatch is how many entries a read of the Source asks for.
const DefaultBatch = 500

// Worker carries out the export queue's jobs.
type Worker struct {
	Source  Source
	Records Records
	Files   Files
	// Batch is the size of the Source's batches (DefaultBatch when 0).
	Batch int
	Log   *slog.Logger
}

// Handle carries out one job ({user, id}): it writes the archive of the
// export the job names and settles it READY. A job for an export that is
// no longer the user's pending one does nothing; one whose account is gone
// settles FAILED. Any other error leaves the job to be retried: the
// archive is written whole or not at all, under the account's one key.
func (w *Worker) Handle(ctx context.Context, job map[string]string) error {
	user, id := job["user"], job["id"]
	e, err := w.Records.LatestExport(ctx, user)
	if err != nil {
		return err
	}
	if e == nil || e.ID != id || e.Status != social.ExportPending {
		return nil
	}
	start := time.Now()
	n, err := w.Files.WriteExport(ctx, user, func(out io.Writer) error { return w.Write(ctx, out, user) })
	if social.IsCode(err, social.NotFound) {
		return w.Records.SettleExport(ctx, user, id, 0)
	}
	if err != nil {
		return fmt.Errorf("export %s of %s: %w", id, user, err)
	}
	if w.Log != nil {
		w.Log.Info("data export ready", "user", user, "export", id, "bytes", n, "took", time.Since(start))
	}
	return w.Records.SettleExport(ctx, user, id, n)
}

func (w *Worker) batch() int {
	if w.Batch > 0 {
		return w.Batch
	}
	return DefaultBatch
}

// Write streams the archive of userID's data to out: profile.json,
// posts.json with the posts' files under media/, comments.json,
// likes.json, follows.json, followers.json, blocks.json, mutes.json,
// lists.json, bookmarks.json, notifications.json. It holds one batch at
// a time.
func (w *Worker) Write(ctx context.Context, out io.Writer, userID string) error {
	zw := zip.NewWriter(out)
	a := &archive{w: w, zw: zw, user: userID}
	steps := []func(context.Context) error{a.profile, a.posts, a.media, a.comments, a.likes,
		a.users(social.PartFollowing), a.users(social.PartFollowers), a.users(social.PartBlocks), a.users(social.PartMutes),
		a.lists, a.bookmarks, a.notifications}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			return err
		}
	}
	return zw.Close()
}

// archive is one archive being written.
type archive struct {
	w    *Worker
	zw   *zip.Writer
	user string
	buf  []byte // copies the media files
}

// file starts a file of the archive.
func (a *archive) file(name string, method uint16) (io.Writer, error) {
	f, err := a.zw.CreateHeader(&zip.FileHeader{Name: name, Method: method, Modified: time.Now().UTC()})
	if err != nil {
		return nil, fmt.Errorf("archive %s: %w", name, err)
	}
	return f, nil
}

// array writes a JSON array, one element a line, as items come.
type array struct {
	w     io.Writer
	count int
}

func (a *archive) array(name string) (*array, error) {
	f, err := a.file(name, zip.Deflate)
	if err != nil {
		return nil, err
	}
	_, err = io.WriteString(f, "[")
	return &array{w: f}, err
}

func (r *array) add(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	sep := ",\n"
	if r.count == 0 {
		sep = "\n"
	}
	r.count++
	if _, err := io.WriteString(r.w, sep); err != nil {
		return err
	}
	_, err = r.w.Write(b)
	return err
}

func (r *array) close() error {
	end := "\n]\n"
	if r.count == 0 {
		end = "]\n"
	}
	_, err := io.WriteString(r.w, end)
	return err
}

// each pages through a part of the account, batch by batch.
func (a *archive) each(ctx context.Context, part social.ExportPart, fn func([]social.ExportEntry) error) error {
	cursor := ""
	for {
		entries, next, err := a.w.Source.ExportEntries(ctx, a.user, part, cursor, a.w.batch())
		if err != nil {
			return err
		}
		if len(entries) > 0 {
			if err := fn(entries); err != nil {
				return err
			}
		}
		if next == "" {
			return nil
		}
		cursor = next
	}
}

// entryList writes name as the array of a part, each batch of entries
// turned into elements by rows.
func (a *archive) entryList(ctx context.Context, name string, part social.ExportPart, rows func([]social.ExportEntry) ([]any, error)) error {
	arr, err := a.array(name)
	if err != nil {
		return err
	}
	err = a.each(ctx, part, func(entries []social.ExportEntry) error {
		items, err := rows(entries)
		if err != nil {
			return err
		}
		for _, it := range items {
			if err := arr.add(it); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return arr.close()
}

func ids(entries []social.ExportEntry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.ID
	}
	return out
}

// mediaName is where a post's file is in the archive.
func mediaName(postID string, m social.Media) string {
	return path.Join("media", postID, m.ID+extensions[m.MIME])
}

// extensions are the file name extensions of the media types the gateway
// accepts (internal/media).
var extensions = map[string]string{"image/jpeg": ".jpg", "image/png": ".png", "image/webp": ".webp", "image/gif": ".gif",
	"audio/ogg": ".ogg", "audio/mp4": ".m4a", "audio/aac": ".aac", "audio/mpeg": ".mp3"}
