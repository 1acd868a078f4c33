// Package mediastore keeps the files attached to posts in a blob bucket
// (gocloud.dev/blob): a local directory by default (fileblob), S3 or any
// S3-compatible service in production (s3blob). Save checks a file with
// internal/media and streams the cleaned copy to the bucket; nothing of a
// refused file is stored.
package mediastore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob" // file:// buckets
	_ "gocloud.dev/blob/s3blob"   // s3:// buckets
	"gocloud.dev/gcerrors"

	"github.com/socialgw/gateway/internal/media"
	"github.com/socialgw/gateway/internal/social"
)

// Store saves, serves and deletes media files in a bucket.
type Store struct {
	bucket *blob.Bucket
	// MaxPixels bounds an image's canvas (media.DefaultMaxPixels when 0).
	MaxPixels int64
	// Stamp names the post a file is being stored for, by its author and
	// the post sequence now (social.StoredFile), for the key: the Sweeper
	// finds from it whether a post names the file. Nil: keys name no
	// post, and the sweeper keeps such files.
	Stamp func(ctx context.Context) (author string, seq int64, err error)
	// Profile bounds profile pictures (profile.go).
	Profile ProfileBounds
}

// Open opens the bucket of a gocloud URL: file:///dir?create_dir=true or
// s3://bucket?region=…&endpoint=…&use_path_style=true (credentials from
// the AWS environment: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY).
func Open(ctx context.Context, url string) (*Store, error) {
	b, err := blob.OpenBucket(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("open media bucket: %w", err)
	}
	return New(b), nil
}

// New returns a store over an open bucket, which it owns from then on.
func New(b *blob.Bucket) *Store { return &Store{bucket: b} }

// Close closes the bucket.
func (s *Store) Close() error { return s.bucket.Close() }

// Save checks a file of size bytes (media.Inspect) and writes its cleaned
// copy (media.Clean, which decodes an image as it writes it) to the
// bucket under a fresh key. A file that is refused, an image whose
// pixels do not decode, or a write that fails, leaves nothing in the
// bucket. Alt is
// left to the caller.
func (s *Store) Save(ctx context.Context, f io.ReaderAt, size int64) (m social.Media, err error) {
	maxPixels := s.MaxPixels
	if maxPixels == 0 {
		maxPixels = media.DefaultMaxPixels
	}
	info, err := media.Inspect(f, size, maxPixels)
	if err != nil {
		return m, err
	}
	id := newID()
	key, err := s.key(ctx, id)
	if err != nil {
		return m, err
	}
	// Cancelling the writer's context is how gocloud aborts a write: the
	// object is then never created.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := s.bucket.NewWriter(wctx, key, &blob.WriterOptions{ContentType: info.MIME})
	if err != nil {
		return m, fmt.Errorf("store media: %w", err)
	}
	n, err := media.Clean(w, f, size, info, maxPixels)
	if err != nil {
		cancel()
		_ = w.Close()
		return m, err
	}
	if err := w.Close(); err != nil {
		return m, fmt.Errorf("store media: %w", err)
	}
	return social.Media{ID: id, Kind: info.Kind, MIME: info.MIME, Bytes: n, Width: info.Width, Height: info.Height,
		Duration: info.Duration, Key: key}, nil
}

// newID is a media file's id: 96 random bits, so that ids (and the keys
// and URLs built from them) can be neither guessed nor enumerated.
func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Delete removes files by key; one already gone is not an error, so a
// retried deletion succeeds.
func (s *Store) Delete(ctx context.Context, keys []string) error {
	for _, k := range keys {
		if err := s.bucket.Delete(ctx, k); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
			return fmt.Errorf("delete media %s: %w", k, err)
		}
	}
	return nil
}

// Open opens a stored file for reading; it seeks, so ranges can be
// served from it. A missing file is NOT_FOUND.
func (s *Store) Open(ctx context.Context, key string) (io.ReadSeekCloser, error) {
	r, err := s.bucket.NewReader(ctx, key, nil)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil, social.Errorf(social.NotFound, "media not found")
	}
	if err != nil {
		return nil, fmt.Errorf("open media %s: %w", key, err)
	}
	return r, nil
}

// Exists reports whether a key is stored (tests, the sweeper's checks).
func (s *Store) Exists(ctx context.Context, key string) (bool, error) {
	ok, err := s.bucket.Exists(ctx, key)
	if err != nil && !errors.Is(err, context.Canceled) {
		return false, fmt.Errorf("check media %s: %w", key, err)
	}
	return ok, err
}

// Keys lists every stored key (tests).
func (s *Store) Keys(ctx context.Context) ([]string, error) {
	var keys []string
	it := s.bucket.List(&blob.ListOptions{Prefix: keyPrefix})
	for {
		o, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			return keys, nil
		}
		if err != nil {
			return nil, fmt.Errorf("list media: %w", err)
		}
		keys = append(keys, o.Key)
	}
}

// Write streams into the bucket, under key, what fill writes, and
// returns its size. The object is written whole or not at all: when fill
// or the write fails, the write is aborted and an earlier object under
// key is left as it was.
func (s *Store) Write(ctx context.Context, key, mime string, fill func(io.Writer) error) (int64, error) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := s.bucket.NewWriter(wctx, key, &blob.WriterOptions{ContentType: mime})
	if err != nil {
		return 0, fmt.Errorf("store %s: %w", key, err)
	}
	cw := &counter{w: w}
	if err := fill(cw); err != nil {
		cancel()
		_ = w.Close()
		return 0, err
	}
	if err := w.Close(); err != nil {
		return 0, fmt.Errorf("store %s: %w", key, err)
	}
	return cw.n, nil
}

// counter counts the bytes written through it.
type counter struct {
	w io.Writer
	n int64
}

func (c *counter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// WriteExport writes userID's data export archive (ExportKey) with
// Write, replacing the previous one.
func (s *Store) WriteExport(ctx context.Context, userID string, fill func(io.Writer) error) (int64, error) {
	return s.Write(ctx, ExportKey(userID), "application/zip", fill)
}

// OpenExport opens userID's data export archive: NOT_FOUND when there is
// none.
func (s *Store) OpenExport(ctx context.Context, userID string) (io.ReadSeekCloser, error) {
	return s.Open(ctx, ExportKey(userID))
}
