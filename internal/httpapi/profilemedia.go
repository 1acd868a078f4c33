package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/socialgw/gateway/internal/gqlerr"
	"github.com/socialgw/gateway/internal/social"
)

// ProfileMediaPath is where the gateway serves the scaled copies of
// profile pictures: /media/profile/{user}/{picture}/{size}. The path
// lies below MediaPath ("profile" is no post id), so whatever routes
// /media/ routes both.
const ProfileMediaPath = MediaPath + "profile/"

// ProfileURL is the address of a copy of a profile picture. Profile
// pictures are public, as the profile is: the address is stable and
// cacheable, and a new picture has a new one.
func (m *MediaAddresses) ProfileURL(userID, imageID string, size int) string {
	return m.Base + ProfileMediaPath + userID + "/" + imageID + "/" + strconv.Itoa(size)
}

// ProfileUsers reads profiles (redisstore.AccountService).
type ProfileUsers interface {
	Users(ctx context.Context, ids []string) ([]*social.User, error)
}

// WithProfilePictures serves profile pictures at ProfileMediaPath with
// ProfileHandler and the rest of MediaPath with posts.
func WithProfilePictures(posts http.Handler, files MediaFiles, users ProfileUsers) http.Handler {
	pictures := ProfileHandler(files, users)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, ProfileMediaPath) {
			pictures.ServeHTTP(w, r)
			return
		}
		posts.ServeHTTP(w, r)
	})
}

// ProfileHandler serves GET and HEAD of the copies of profile pictures
// (nil files: none) that a profile names now: a replaced or removed
// picture is not served even while its files remain. Every refusal is
// 404.
func ProfileHandler(files MediaFiles, users ProfileUsers) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		parts := strings.Split(strings.TrimPrefix(r.URL.Path, ProfileMediaPath), "/")
		if len(parts) != 3 || !social.IsID(parts[0]) || parts[1] == "" || files == nil {
			http.NotFound(w, r)
			return
		}
		size, err := strconv.Atoi(parts[2])
		if err != nil {
			http.NotFound(w, r)
			return
		}
		us, err := users.Users(r.Context(), []string{parts[0]})
		if err != nil {
			gqlerr.Present(r.Context(), err) // logs it
			h.Set("Retry-After", "1")
			http.Error(w, "try again", http.StatusServiceUnavailable)
			return
		}
		file, ok := pictureFile(us[0], parts[1], size)
		if !ok {
			http.NotFound(w, r)
			return
		}
		serveFile(w, r, files, file.Key, file.MIME, "public, max-age=86400")
	})
}

// pictureFile finds the copy of size of the picture imageID that u's
// profile names (its avatar or its header).
func pictureFile(u *social.User, imageID string, size int) (social.ImageFile, bool) {
	if u == nil {
		return social.ImageFile{}, false
	}
	for _, img := range []*social.ProfileImage{u.Avatar, u.Header} {
		if img == nil || img.ID != imageID {
			continue
		}
		for _, v := range img.Versions {
			if v.Size == size {
				return v, true
			}
		}
	}
	return social.ImageFile{}, false
}
