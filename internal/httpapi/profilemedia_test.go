package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"slices"
	"strings"
	"testing"

	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/httpapi"
	"github.com/socialgw/gateway/internal/media/mediatest"
)

const profileDoc = `mutation($i: UpdateProfileInput!) { updateProfile(input: $i) { displayName
	avatar(size: 48) { id url mimeType bytes width height } bigAvatar: avatar { url width height }
	header(size: 600) { url width height } } }`

// profileRequest builds updateProfile as a GraphQL multipart request,
// each file put at the input field its part names (avatar, header).
func profileRequest(t *testing.T, baseURL, token string, input map[string]any, files map[string][]byte) *http.Request {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fileMap := map[string][]string{}
	for field := range files {
		input[field] = nil
		fileMap[field] = []string{"variables.i." + field}
	}
	ops, _ := json.Marshal(map[string]any{"query": profileDoc, "variables": map[string]any{"i": input}})
	_ = mw.WriteField("operations", string(ops))
	m, _ := json.Marshal(fileMap)
	_ = mw.WriteField("map", string(m))
	for field, data := range files {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="%s"; filename="%s.jpg"`, field, field))
		h.Set("Content-Type", "image/jpeg")
		pw, _ := mw.CreatePart(h)
		_, _ = pw.Write(data)
	}
	_ = mw.Close()
	req, _ := http.NewRequest(http.MethodPost, baseURL+"/query", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("GraphQL-Require-Preflight", "1")
	req.Header.Set("Authorization", "Bearer "+token)
	return req
}

// profileFiles lists a user's stored profile picture files.
func (s *mediaServer) profileFiles(t *testing.T, userID string) []string {
	t.Helper()
	keys, err := s.files.ProfileFiles(context.Background(), userID)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	return keys
}

// servedImage GETs a picture's address and decodes it.
func (s *mediaServer) servedImage(t *testing.T, url string) (image.Config, string) {
	t.Helper()
	status, h, body := s.fetch(t, url, "")
	if status != 200 || h.Get("X-Content-Type-Options") != "nosniff" || !strings.HasPrefix(h.Get("Cache-Control"), "public") {
		t.Fatalf("GET %s = %d %v", url, status, h)
	}
	if bytes.Contains(body, []byte("GPSLatitude")) {
		t.Errorf("GET %s: the picture holds its location metadata", url)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(body))
	if err != nil || "image/"+format != h.Get("Content-Type") {
		t.Fatalf("GET %s: %v, format %s as %s", url, err, format, h.Get("Content-Type"))
	}
	return cfg, format
}

// TestUpdateProfilePictures uploads, replaces and removes an avatar and
// a header over multipart requests: the copies are scaled and served,
// the replaced files deleted, and a refused update changes nothing.
func TestUpdateProfilePictures(t *testing.T) {
	s := newMediaServer(t, httpapi.Uploads{})
	s.files.Profile.MaxBytes = 200 << 10
	u := s.Register(t, "pictured")

	r := gatewaytest.Send(t, profileRequest(t, s.URL, u.Token, map[string]any{"displayName": "Pic"},
		map[string][]byte{"avatar": mediatest.JPEGWithGPS(t, 640, 480), "header": mediatest.JPEGWithGPS(t, 1600, 400)}))
	if r.Code() != "" {
		t.Fatalf("upload: %+v", r.Errors)
	}
	if r.Str("updateProfile.displayName") != "Pic" || r.Int("updateProfile.avatar.width") != 48 || r.Int("updateProfile.avatar.height") != 48 ||
		r.Int("updateProfile.bigAvatar.width") != 400 || r.Int("updateProfile.header.width") != 600 || r.Int("updateProfile.header.height") != 150 {
		t.Fatalf("updateProfile = %v", r.Data)
	}
	for url, want := range map[string][2]int{
		r.Str("updateProfile.avatar.url"): {48, 48}, r.Str("updateProfile.bigAvatar.url"): {400, 400}, r.Str("updateProfile.header.url"): {600, 150},
	} {
		if cfg, _ := s.servedImage(t, url); cfg.Width != want[0] || cfg.Height != want[1] {
			t.Errorf("GET %s: %d×%d, want %v", url, cfg.Width, cfg.Height, want)
		}
	}
	files := s.profileFiles(t, u.ID)
	if len(files) != 7 || !slices.ContainsFunc(files, func(k string) bool { return strings.HasSuffix(k, "/orig") }) {
		t.Fatalf("stored %v, want an original and 3 copies of the avatar, an original and 2 of the header", files)
	}
	oldAvatar := r.Str("updateProfile.avatar.url")

	refusals := []struct {
		name  string
		files map[string][]byte
	}{
		{"not an image", map[string][]byte{"avatar": []byte("PK\x03\x04 zipped, not a picture")}},
		{"too many bytes", map[string][]byte{"avatar": append(mediatest.JPEGWithGPS(t, 64, 64), make([]byte, 200<<10)...)}},
		{"a good header with a bad avatar", map[string][]byte{"header": mediatest.JPEGWithGPS(t, 800, 200), "avatar": mediatest.MP3(3, false)}},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			r := gatewaytest.Send(t, profileRequest(t, s.URL, u.Token, map[string]any{"displayName": "Changed"}, tc.files))
			if r.Code() != "BAD_USER_INPUT" {
				t.Fatalf("code %q (%+v), want BAD_USER_INPUT", r.Code(), r.Errors)
			}
			if got := s.profileFiles(t, u.ID); !slices.Equal(got, files) {
				t.Errorf("files %v after a refusal, want %v", got, files)
			}
			me := s.MustDo(t, u.Token, `{ me { displayName avatar(size: 48) { url } } }`, nil)
			if me.Str("me.displayName") != "Pic" || me.Str("me.avatar.url") != oldAvatar {
				t.Errorf("profile after a refusal: %v", me.Data)
			}
		})
	}

	// A new avatar replaces the old one, whose files go.
	r = gatewaytest.Send(t, profileRequest(t, s.URL, u.Token, map[string]any{}, map[string][]byte{"avatar": mediatest.PNGWithText(t, 30, 50)}))
	if r.Code() != "" || r.Int("updateProfile.avatar.width") != 30 || r.Str("updateProfile.avatar.mimeType") != "image/png" {
		t.Fatalf("replace: %v %+v", r.Data, r.Errors)
	}
	if status, _, _ := s.fetch(t, oldAvatar, ""); status != 404 {
		t.Errorf("the replaced avatar is still served: %d", status)
	}
	if got := s.profileFiles(t, u.ID); len(got) != 7 || slices.ContainsFunc(got, func(k string) bool {
		return slices.Contains(files, k) && strings.Contains(oldAvatar, strings.Split(k, "/")[2])
	}) {
		t.Errorf("files after the replacement: %v (before %v)", got, files)
	}
	s.servedImage(t, r.Str("updateProfile.avatar.url"))

	// Removing both leaves no file.
	r = gatewaytest.Send(t, profileRequest(t, s.URL, u.Token, map[string]any{"removeAvatar": true, "removeHeader": true}, nil))
	if r.Code() != "" || r.Get("updateProfile.avatar") != nil || r.Get("updateProfile.header") != nil {
		t.Fatalf("remove: %v %+v", r.Data, r.Errors)
	}
	if got := s.profileFiles(t, u.ID); len(got) != 0 {
		t.Errorf("files after removing both: %v", got)
	}
}
