package export

import (
	"archive/zip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/socialgw/gateway/internal/social"
)

// The files of the archive: each a function that writes one.

type profileJSON struct {
	ID            string    `json:"id"`
	Name          string    `json:"name"`
	DisplayName   string    `json:"displayName,omitempty"`
	Email         string    `json:"email"`
	EmailVerified bool      `json:"emailVerified"`
	Bio           string    `json:"bio"`
	CreatedAt     time.Time `json:"createdAt"`
}

func (a *archive) profile(ctx context.Context) error {
	u, err := a.w.Source.ExportProfile(ctx, a.user)
	if err != nil {
		return err
	}
	f, err := a.file("profile.json", zip.Deflate)
	if err != nil {
		return err
	}
	return writeJSON(f, profileJSON{ID: u.ID, Name: u.Name, DisplayName: u.DisplayName, Email: u.Email,
		EmailVerified: u.EmailVerified, Bio: u.Bio, CreatedAt: u.CreatedAt})
}

func writeJSON(w io.Writer, v any) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(v)
}

type mediaJSON struct {
	ID       string  `json:"id"`
	Kind     string  `json:"kind"`
	MIME     string  `json:"mime"`
	Bytes    int64   `json:"bytes"`
	Width    int     `json:"width,omitempty"`
	Height   int     `json:"height,omitempty"`
	Duration float64 `json:"duration,omitempty"`
	Alt      string  `json:"alt,omitempty"`
	// File is the file's name in the archive.
	File string `json:"file"`
}

type postJSON struct {
	ID          string           `json:"id"`
	CreatedAt   time.Time        `json:"createdAt"`
	Content     string           `json:"content"`
	Visibility  string           `json:"visibility"`
	RepostOf    string           `json:"repostOf,omitempty"`
	SpoilerText *string          `json:"spoilerText,omitempty"`
	Sensitive   bool             `json:"sensitive,omitempty"`
	EditedAt    *time.Time       `json:"editedAt,omitempty"`
	Source      string           `json:"source,omitempty"`
	Location    *social.Location `json:"location,omitempty"`
	Mentions    []string         `json:"mentions,omitempty"`
	Media       []mediaJSON      `json:"media,omitempty"`
}

// posts writes posts.json, newest first.
func (a *archive) posts(ctx context.Context) error {
	return a.entryList(ctx, "posts.json", social.PartPosts, func(entries []social.ExportEntry) ([]any, error) {
		ps, err := a.w.Source.ExportPosts(ctx, a.user, ids(entries))
		if err != nil {
			return nil, err
		}
		var out []any
		for _, p := range ps {
			if p == nil {
				continue
			}
			j := postJSON{ID: p.ID, CreatedAt: p.CreatedAt, Content: p.Content, Visibility: string(p.Visibility),
				RepostOf: p.RepostOfID, SpoilerText: p.SpoilerText, Sensitive: p.Sensitive, EditedAt: p.EditedAt,
				Source: p.Source, Location: p.Location, Mentions: p.Mentions}
			for _, m := range p.Media {
				j.Media = append(j.Media, mediaJSON{ID: m.ID, Kind: string(m.Kind), MIME: m.MIME, Bytes: m.Bytes,
					Width: m.Width, Height: m.Height, Duration: m.Duration, Alt: m.Alt, File: mediaName(p.ID, m)})
			}
			out = append(out, j)
		}
		return out, nil
	})
}

// media copies the posts' files into the archive (stored, not
// compressed: they are compressed already), a second pass over the posts
// since a zip is written one file after the other.
func (a *archive) media(ctx context.Context) error {
	return a.each(ctx, social.PartPosts, func(entries []social.ExportEntry) error {
		ps, err := a.w.Source.ExportPosts(ctx, a.user, ids(entries))
		if err != nil {
			return err
		}
		for _, p := range ps {
			if p == nil || p.AuthorID != a.user {
				continue
			}
			for _, m := range p.Media {
				if err := a.copyFile(ctx, mediaName(p.ID, m), m.Key); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

func (a *archive) copyFile(ctx context.Context, name, key string) error {
	r, err := a.w.Files.Open(ctx, key)
	if social.IsCode(err, social.NotFound) {
		return nil // deleted with its post meanwhile
	}
	if err != nil {
		return err
	}
	defer r.Close()
	f, err := a.file(name, zip.Store)
	if err != nil {
		return err
	}
	// Through the archive's one buffer: the blob reader's own WriteTo
	// would allocate one for each file.
	if a.buf == nil {
		a.buf = make([]byte, 32<<10)
	}
	if _, err := io.CopyBuffer(f, struct{ io.Reader }{r}, a.buf); err != nil {
		return fmt.Errorf("archive %s: %w", name, err)
	}
	return nil
}

type commentJSON struct {
	ID        string    `json:"id"`
	PostID    string    `json:"postId"`
	InReplyTo string    `json:"inReplyTo,omitempty"`
	Content   string    `json:"content"`
	CreatedAt time.Time `json:"createdAt"`
}

// comments writes comments.json: the comments the account wrote, newest
// first.
func (a *archive) comments(ctx context.Context) error {
	return a.entryList(ctx, "comments.json", social.PartComments, func(entries []social.ExportEntry) ([]any, error) {
		cs, err := a.w.Source.ExportComments(ctx, ids(entries))
		if err != nil {
			return nil, err
		}
		var out []any
		for _, c := range cs {
			if c != nil && c.AuthorID == a.user {
				out = append(out, commentJSON{ID: c.ID, PostID: c.PostID, InReplyTo: c.InReplyToID, Content: c.Content, CreatedAt: c.CreatedAt})
			}
		}
		return out, nil
	})
}

type postRefJSON struct {
	PostID string    `json:"postId"`
	At     time.Time `json:"at"`
}

// likes writes likes.json: the posts the account likes, newest first.
func (a *archive) likes(ctx context.Context) error {
	return a.entryList(ctx, "likes.json", social.PartLikes, func(entries []social.ExportEntry) ([]any, error) {
		standing, err := a.w.Source.ExportLikes(ctx, a.user, entries)
		return postRefs(standing), err
	})
}

// bookmarks writes bookmarks.json, newest first.
func (a *archive) bookmarks(ctx context.Context) error {
	return a.entryList(ctx, "bookmarks.json", social.PartBookmarks, func(entries []social.ExportEntry) ([]any, error) {
		return postRefs(entries), nil
	})
}

func postRefs(entries []social.ExportEntry) []any {
	out := make([]any, len(entries))
	for i, e := range entries {
		out[i] = postRefJSON{PostID: e.ID, At: e.At}
	}
	return out
}

type userRefJSON struct {
	UserID string     `json:"userId"`
	Name   string     `json:"name,omitempty"`
	Since  *time.Time `json:"since,omitempty"`
}

// users returns the step that writes <part>.json: the users of a part
// of the social graph, with their names (empty for an account gone).
func (a *archive) users(part social.ExportPart) func(context.Context) error {
	return func(ctx context.Context) error {
		return a.entryList(ctx, string(part)+".json", part, func(entries []social.ExportEntry) ([]any, error) {
			return a.userRefs(ctx, entries)
		})
	}
}

func (a *archive) userRefs(ctx context.Context, entries []social.ExportEntry) ([]any, error) {
	us, err := a.w.Source.ExportUsers(ctx, ids(entries))
	if err != nil {
		return nil, err
	}
	out := make([]any, len(entries))
	for i, e := range entries {
		r := userRefJSON{UserID: e.ID}
		if us[i] != nil {
			r.Name = us[i].Name
		}
		if !e.At.IsZero() {
			at := e.At
			r.Since = &at
		}
		out[i] = r
	}
	return out, nil
}

type listJSON struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	Members []any  `json:"members"`
}

// lists writes lists.json: the account's lists and their members.
func (a *archive) lists(ctx context.Context) error {
	ls, err := a.w.Source.ExportLists(ctx, a.user)
	if err != nil {
		return err
	}
	arr, err := a.array("lists.json")
	if err != nil {
		return err
	}
	for _, l := range ls {
		members, err := a.userRefs(ctx, l.Members)
		if err != nil {
			return err
		}
		if err := arr.add(listJSON{ID: l.ID, Title: l.Title, Members: members}); err != nil {
			return err
		}
	}
	return arr.close()
}

type noteJSON struct {
	ID          string    `json:"id"`
	Kind        string    `json:"kind"`
	PostID      string    `json:"postId,omitempty"`
	CommentID   string    `json:"commentId,omitempty"`
	Actors      []string  `json:"actors"`
	ActorsCount int       `json:"actorsCount"`
	UpdatedAt   time.Time `json:"updatedAt"`
	Read        bool      `json:"read"`
}

// notifications writes notifications.json, most recently active first.
func (a *archive) notifications(ctx context.Context) error {
	arr, err := a.array("notifications.json")
	if err != nil {
		return err
	}
	for after := ""; ; {
		notes, next, err := a.w.Source.ExportNotifications(ctx, a.user, after, social.MaxFirst)
		if err != nil {
			return err
		}
		for _, n := range notes {
			if err := arr.add(noteJSON{ID: n.ID, Kind: string(n.Kind), PostID: n.PostID, CommentID: n.CommentID,
				Actors: n.Actors, ActorsCount: n.ActorsCount, UpdatedAt: n.UpdatedAt, Read: n.Read}); err != nil {
				return err
			}
		}
		if next == "" {
			return arr.close()
		}
		after = next
	}
}
