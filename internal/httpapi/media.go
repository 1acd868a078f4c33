package httpapi

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/gqlerr"
	"github.com/socialgw/gateway/internal/social"
)

// MediaAddresses makes and checks the addresses of posts' files. A
// PUBLIC post's files have stable, cacheable addresses; the files of a
// post with a restricted audience are served only through a signed
// address naming the viewer and an expiry, and every request checks again
// that the viewer may see the post, so a deleted post's files, or a viewer
// taken out of the audience, stop being served.
type MediaAddresses struct {
	// Key signs restricted addresses (HMAC-SHA256); TTL is how long one
	// holds.
	Key []byte
	TTL time.Duration
	// Base is put before the path of every address ("" keeps them
	// relative to the gateway: /media/…).
	Base string
	// Now is the clock of expiries (time.Now when nil).
	Now func() time.Time
}

// MediaFiles opens the stored files of posts (internal/mediastore).
type MediaFiles interface {
	Open(ctx context.Context, key string) (io.ReadSeekCloser, error)
}

// MediaPath is where the gateway serves media files: /media/{post}/{file}.
const MediaPath = "/media/"

func (m *MediaAddresses) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// URL is the address of a post's file for viewerID: the path alone for a
// PUBLIC post, signed with the viewer and an expiry otherwise. Expiries
// are rounded up to the minute so that a page loaded twice gives the
// same address, which a browser's cache can use.
func (m *MediaAddresses) URL(p *social.Post, fileID, viewerID string) string {
	path := m.Base + MediaPath + p.ID + "/" + fileID
	if p.Visibility == social.Public {
		return path
	}
	exp := m.now().Add(m.ttl()).Truncate(time.Minute).Add(time.Minute).Unix()
	q := url.Values{"v": {viewerID}, "exp": {strconv.FormatInt(exp, 10)}, "sig": {m.sign(p.ID, fileID, viewerID, exp)}}
	return path + "?" + q.Encode()
}

func (m *MediaAddresses) ttl() time.Duration {
	if m.TTL > 0 {
		return m.TTL
	}
	return 15 * time.Minute
}

// sign is the signature of a restricted address.
func (m *MediaAddresses) sign(postID, fileID, viewerID string, exp int64) string {
	h := hmac.New(sha256.New, m.Key)
	fmt.Fprintf(h, "media\x00%s\x00%s\x00%s\x00%d", postID, fileID, viewerID, exp)
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// PostReader loads posts as a viewer may see them (redisstore.PostService).
type PostReader interface {
	VisiblePosts(ctx context.Context, viewerID string, ids []string) ([]*social.Post, error)
}

// Handler serves GET and HEAD /media/{post}/{file} from files (nil: none),
// with ranges. An
// address without a signature serves only a PUBLIC post's files; a
// signed one serves its viewer, until it expires, as long as that viewer
// may still see the post. A request that carries a token must be the
// signed viewer's, so an address taken from someone else is refused to a
// signed-in client; one without a token (an <img> element sends none) is
// served on the signature alone: the address is then a capability that
// whoever holds it may use until it expires (MEDIA_URL_TTL). Every
// refusal is 404, so an address reveals nothing of a post it does not
// open.
func (m *MediaAddresses) Handler(files MediaFiles, posts PostReader, authn auth.Authenticator) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		postID, fileID, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, MediaPath), "/")
		if !ok || !social.IsID(postID) || fileID == "" || files == nil {
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
		cache := "private, no-store"
		if p.Visibility == social.Public {
			cache = "public, max-age=86400"
		}
		serveFile(w, r, files, file.Key, file.MIME, cache)
	})
}

// serveFile serves a stored file with its type and cache policy, and
// with ranges; a missing file is 404.
func serveFile(w http.ResponseWriter, r *http.Request, files MediaFiles, key, mime, cache string) {
	f, err := files.Open(r.Context(), key)
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
	h := w.Header()
	h.Set("Content-Type", mime)
	// Never rendered as a document of the gateway's origin.
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	h.Set("Cache-Control", cache)
	http.ServeContent(w, r, "", time.Time{}, f)
}
