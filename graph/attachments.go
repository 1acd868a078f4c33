package graph

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/socialgw/gateway/graph/model"
	"github.com/socialgw/gateway/internal/gqlerr"
	"github.com/socialgw/gateway/internal/ratelimit"
	"github.com/socialgw/gateway/internal/social"
)

// MediaFiles checks, stores and deletes the files attached to
// posts (internal/mediastore).
type MediaFiles interface {
	// Save checks a file and stores its cleaned copy; a refused file
	// (BAD_USER_INPUT) leaves nothing stored.
	Save(ctx context.Context, f io.ReaderAt, size int64) (social.Media, error)
	Delete(ctx context.Context, keys []string) error
}

// MediaURLs gives the address of a post's file as a viewer reads it
// (httpapi.MediaAddresses, whose handler serves it).
type MediaURLs interface {
	URL(p *social.Post, fileID, viewerID string) string
}

// Attachments attaches files to new posts and gives out their addresses.
type Attachments struct {
	Files MediaFiles
	// MaxFiles bounds the files of a post.
	MaxFiles int
	// URLs addresses the files.
	URLs MediaURLs
	// Budget spends the per-user upload budget; nil: none.
	Budget Limiter
	// Saving holds a place for each post whose files are being checked
	// and stored (nil: no bound). Checking an MP3's frames and copying a
	// file are CPU work: a burst of uploads saved all at once would take
	// every core from the requests around them, so the others wait their
	// turn, up to their request's deadline.
	Saving chan struct{}
}

// save checks and stores the files of a new post of userID, in order. On
// any failure the files already stored are deleted and nothing remains:
// a post is made with all its files or not at all.
func (m *Attachments) save(ctx context.Context, userID string, in []*model.MediaInput) ([]social.Media, error) {
	if len(in) == 0 {
		return nil, nil
	}
	if m == nil || m.Files == nil {
		return nil, social.Errorf(social.BadUserInput, "this gateway takes no media files")
	}
	if err := social.ValidateMediaCount(len(in), m.MaxFiles); err != nil {
		return nil, err
	}
	// The alt texts are the post's input, checked with it by the post
	// service (Posts.CheckPost, then CreatePost).
	alts := make([]string, len(in))
	for i, f := range in {
		if f.Alt != nil {
			alts[i] = *f.Alt
		}
		if f.File.File == nil {
			return nil, social.Errorf(social.BadUserInput, "media file %d was not sent", i)
		}
	}
	if m.Budget != nil {
		for range in {
			if err := m.Budget.Allow(ctx, ratelimit.RuleUploadUser, userID); err != nil {
				return nil, err
			}
		}
	}
	if m.Saving != nil {
		select {
		case m.Saving <- struct{}{}:
			defer func() { <-m.Saving }()
		case <-ctx.Done():
			return nil, &social.Error{Code: social.RateLimited, RetryAfter: time.Second,
				Message: "the server is busy storing other files: retry in a second"}
		}
	}
	var saved []social.Media
	for i, f := range in {
		r, ok := f.File.File.(io.ReaderAt)
		if !ok {
			return nil, m.discard(ctx, saved, errors.New("an upload that is not a file"))
		}
		sm, err := m.Files.Save(ctx, r, f.File.Size)
		if err != nil {
			if social.ErrorCode(err) == social.BadUserInput {
				err = social.Errorf(social.BadUserInput, "media file %d (%s): %s", i, f.File.Filename, social.ErrorMessage(err))
			}
			return nil, m.discard(ctx, saved, err)
		}
		sm.Alt = alts[i]
		saved = append(saved, sm)
	}
	return saved, nil
}

// discard deletes files stored for a post that is not made, and returns
// the error that stopped it.
func (m *Attachments) discard(ctx context.Context, files []social.Media, cause error) error {
	if len(files) == 0 {
		return cause
	}
	keys := make([]string, len(files))
	for i, f := range files {
		keys[i] = f.Key
	}
	// Even when the request was cancelled: the files must go. When they
	// cannot, they are orphans (docs/security.md, "Media files"): logged,
	// and the client still gets the error that stopped its post.
	if err := m.Files.Delete(context.WithoutCancel(ctx), keys); err != nil {
		gqlerr.Present(ctx, fmt.Errorf("delete the files of a post not made: %w", err))
	}
	return cause
}

// view is a post's files as the schema shows them to viewerID.
func (m *Attachments) view(p *social.Post, viewerID string) []*model.Media {
	out := make([]*model.Media, len(p.Media))
	for i, f := range p.Media {
		v := &model.Media{ID: f.ID, Kind: model.MediaKind(f.Kind), URL: m.URLs.URL(p, f.ID, viewerID), MimeType: f.MIME, Bytes: int(f.Bytes)}
		if f.Kind == social.Image {
			v.Width, v.Height = &f.Width, &f.Height
		}
		if f.Kind == social.Audio {
			v.Duration = &f.Duration
		}
		v.Alt = optional(f.Alt)
		out[i] = v
	}
	return out
}

// Limiter spends rate-limit budgets (internal/ratelimit.Limiter): here
// the per-user upload budget.
type Limiter interface {
	Allow(ctx context.Context, rule, subject string) error
	// Has reports whether a rule is limited at all.
	Has(rule string) bool
}
