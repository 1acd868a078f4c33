package graph

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/socialgw/gateway/graph/model"
	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/gqlerr"
	"github.com/socialgw/gateway/internal/ratelimit"
	"github.com/socialgw/gateway/internal/social"
)

// MediaFiles checks, stores, serves and deletes the files attached to
// posts (internal/mediastore).
type MediaFiles interface {
	// Save checks a file and stores its cleaned copy; a refused file
	// (BAD_USER_INPUT) leaves nothing stored.
	Save(ctx context.Context, f io.ReaderAt, size int64) (social.Media, error)
	Delete(ctx context.Context, keys []string) error
	Open(ctx context.Context, key string) (io.ReadSeekCloser, error)
}

// Attachments attaches files to new posts and gives out and serves their
// addresses. A PUBLIC post's files have stable, cacheable addresses; the
// files of a post with a restricted audience are served only through a
// signed address naming the viewer and an expiry, and every request checks
// again that the viewer may see the post, so a deleted post's files, or a
// viewer taken out of the audience, stop being served.
type Attachments struct {
	Files MediaFiles
	// MaxFiles bounds the files of a post.
	MaxFiles int
	// Key signs restricted addresses (HMAC-SHA256); TTL is how long one
	// holds.
	Key []byte
	TTL time.Duration
	// Base is put before the path of every address ("" keeps them
	// relative to the gateway: /media/…).
	Base string
	// Budget spends the per-user upload budget; nil: none.
	Budget Limiter
	// Saving holds a place for each post whose files are being checked
	// and stored (nil: no bound). Checking an MP3's frames and copying a
	// file are CPU work: a burst of uploads saved all at once would take
	// every core from the requests around them, so the others wait their
	// turn, up to their request's deadline.
	Saving chan struct{}
	// Now is the clock of expiries (time.Now when nil).
	Now func() time.Time
}

// MediaPath is where the gateway serves media files: /media/{post}/{file}.
const MediaPath = "/media/"

func (m *Attachments) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
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
		v := &model.Media{ID: f.ID, Kind: model.MediaKind(f.Kind), URL: m.url(p, f.ID, viewerID), MimeType: f.MIME, Bytes: int(f.Bytes)}
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

// url is the address of a post's file for viewerID: the path alone for a
// PUBLIC post, signed with the viewer and an expiry otherwise. Expiries
// are rounded up to the minute so that a page loaded twice gives the
// same address, which a browser's cache can use.
func (m *Attachments) url(p *social.Post, fileID, viewerID string) string {
	path := m.Base + MediaPath + p.ID + "/" + fileID
	if p.Visibility == social.Public {
		return path
	}
	exp := m.now().Add(m.ttl()).Truncate(time.Minute).Add(time.Minute).Unix()
	q := url.Values{"v": {viewerID}, "exp": {strconv.FormatInt(exp, 10)}, "sig": {m.sign(p.ID, fileID, viewerID, exp)}}
	return path + "?" + q.Encode()
}

func (m *Attachments) ttl() time.Duration {
	if m.TTL > 0 {
		return m.TTL
	}
	return 15 * time.Minute
}

// sign is the signature of a restricted address.
func (m *Attachments) sign(postID, fileID, viewerID string, exp int64) string {
	h := hmac.New(sha256.New, m.Key)
	fmt.Fprintf(h, "media\x00%s\x00%s\x00%s\x00%d", postID, fileID, viewerID, exp)
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// PostReader loads posts as a viewer may see them (redisstore.PostService).
type PostReader interface {
	VisiblePosts(ctx context.Context, viewerID string, ids []string) ([]*social.Post, error)
}

// Handler serves GET and HEAD /media/{post}/{file}, with ranges. An
// address without a signature serves only a PUBLIC post's files; a
// signed one serves its viewer, until it expires, as long as that viewer
// may still see the post. A request that carries a token must be the
// signed viewer's, so an address taken from someone else is refused to a
// signed-in client; one without a token (an <img> element sends none) is
// served on the signature alone: the address is then a capability that
// whoever holds it may use until it expires (MEDIA_URL_TTL). Every
// refusal is 404, so an address reveals nothing of a post it does not
// open.
func (m *Attachments) Handler(posts PostReader, authn auth.Authenticator) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		postID, fileID, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, MediaPath), "/")
		if !ok || !social.IsID(postID) || fileID == "" || m.Files == nil {
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		viewer, signed := "", q.Has("sig")
		if signed {
			exp, err := strconv.ParseInt(q.Get("exp"), 10, 64)
			viewer = q.Get("v")
			want := m.sign(postID, fileID, viewer, exp)
			if err != nil || !hmac.Equal([]byte(want), []byte(q.Get("sig"))) || m.now().Unix() > exp {
				http.NotFound(w, r)
				return
			}
		}
		if hdr := r.Header.Get("Authorization"); hdr != "" {
			ctx, err := auth.ViewerFromHeader(r.Context(), authn, hdr)
			if err != nil || (signed && social.ViewerID(ctx) != viewer) {
				http.NotFound(w, r)
				return
			}
		}
		ps, err := posts.VisiblePosts(r.Context(), viewer, []string{postID})
		if err != nil {
			gqlerr.Present(r.Context(), err) // logs it
			h.Set("Retry-After", "1")
			http.Error(w, "try again", http.StatusServiceUnavailable)
			return
		}
		p := ps[0]
		if p == nil || (!signed && p.Visibility != social.Public) {
			http.NotFound(w, r)
			return
		}
		var file *social.Media
		for i := range p.Media {
			if p.Media[i].ID == fileID {
				file = &p.Media[i]
			}
		}
		if file == nil {
			http.NotFound(w, r)
			return
		}
		f, err := m.Files.Open(r.Context(), file.Key)
		if social.ErrorCode(err) == social.NotFound {
			http.NotFound(w, r)
			return
		}
		if err != nil {
			gqlerr.Present(r.Context(), err)
			http.Error(w, "try again", http.StatusServiceUnavailable)
			return
		}
		defer f.Close()
		h.Set("Content-Type", file.MIME)
		// Never rendered as a document of the gateway's origin.
		h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
		if p.Visibility == social.Public {
			h.Set("Cache-Control", "public, max-age=86400")
		} else {
			h.Set("Cache-Control", "private, no-store")
		}
		http.ServeContent(w, r, "", time.Time{}, f)
	})
}

// Limiter spends rate-limit budgets (internal/ratelimit.Limiter): here
// the per-user upload budget.
type Limiter interface {
	Allow(ctx context.Context, rule, subject string) error
	// Has reports whether a rule is limited at all.
	Has(rule string) bool
}
