package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/gateway"
	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/httpapi"
	"github.com/socialgw/gateway/internal/media/mediatest"
	"github.com/socialgw/gateway/internal/mediastore"
	"github.com/socialgw/gateway/internal/ratelimit"
	"github.com/socialgw/gateway/internal/s3test"
)

const (
	mediaCreateDoc = `mutation($i: CreatePostInput!) { createPost(input: $i) {
	id visibility media { id kind url mimeType bytes width height duration alt } } }`
	mediaPostsCountDoc = `query($u: ID!) { user(id: $u) { postsCount } }`
	mediaDeleteDoc     = `mutation($id: ID!) { deletePost(id: $id) }`
)

// mediaServer is a gateway whose files are kept on a real S3 API, with a
// fan-out worker the test drains.
type mediaServer struct {
	*gatewaytest.Server
	fanout *gatewaytest.Fanout
	files  *mediastore.Store
}

func newMediaServer(t *testing.T, uploads httpapi.Uploads, abuse ...*gateway.Abuse) *mediaServer {
	t.Helper()
	files := mediastore.New(s3test.Start(t).Bucket(t))
	t.Cleanup(func() { files.Close() })
	o := gatewaytest.Options{Media: &gateway.MediaConfig{Files: files}, Uploads: &uploads}
	if len(abuse) > 0 {
		o.Abuse = abuse[0]
	}
	s := gatewaytest.New(t, o)
	return &mediaServer{Server: s, fanout: gatewaytest.NewFanout(t, s), files: files}
}

// upload is one file part of a multipart request.
type upload struct {
	name, contentType string
	data              []byte
	alt               string
}

// multipartRequest builds createPost as a GraphQL multipart request with
// files attached to input.media, in order.
func multipartRequest(t *testing.T, baseURL, token string, input map[string]any, files []upload) *http.Request {
	t.Helper()
	var media []any
	fileMap := map[string][]string{}
	for i, f := range files {
		m := map[string]any{"file": nil}
		if f.alt != "" {
			m["alt"] = f.alt
		}
		media = append(media, m)
		fileMap[fmt.Sprint(i)] = []string{fmt.Sprintf("variables.i.media.%d.file", i)}
	}
	if input == nil {
		input = map[string]any{}
	}
	if input["content"] == nil {
		input["content"] = "with files"
	}
	input["media"] = media
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	ops, _ := json.Marshal(map[string]any{"query": mediaCreateDoc, "variables": map[string]any{"i": input}})
	_ = mw.WriteField("operations", string(ops))
	m, _ := json.Marshal(fileMap)
	_ = mw.WriteField("map", string(m))
	for i, f := range files {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="%d"; filename="%s"`, i, f.name))
		h.Set("Content-Type", f.contentType)
		pw, _ := mw.CreatePart(h)
		_, _ = pw.Write(f.data)
	}
	_ = mw.Close()
	req, _ := http.NewRequest(http.MethodPost, baseURL+"/query", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("GraphQL-Require-Preflight", "1")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req
}

// fetch GETs a media address of the server with a token ("" for none).
func (s *mediaServer) fetch(t *testing.T, url, token string, header ...string) (int, http.Header, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.URL+url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

func (s *mediaServer) keys(t *testing.T) []string {
	t.Helper()
	keys, err := s.files.Keys(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

func TestCreatePostWithMedia(t *testing.T) {
	s := newMediaServer(t, httpapi.Uploads{})
	author := s.Register(t, "author")
	jpg := mediatest.JPEGWithGPS(t, 40, 30)
	png := mediatest.PNGWithText(t, 6, 4)
	type file struct {
		kind, mime    string
		width, height int
		duration      float64
	}
	tests := []struct {
		name  string
		files []upload
		code  string
		want  []file
	}{
		{name: "jpeg with GPS", files: []upload{{"me.jpg", "image/jpeg", jpg, "a cat"}}, want: []file{{"IMAGE", "image/jpeg", 40, 30, 0}}},
		{name: "png claiming to be a jpeg", files: []upload{{"photo.jpg", "image/jpeg", png, ""}}, want: []file{{"IMAGE", "image/png", 6, 4, 0}}},
		{name: "audio", files: []upload{
			{"a.mp3", "audio/mpeg", mediatest.MP3(10, true), ""},
			{"a.opus", "audio/ogg", mediatest.OggOpus(312, 3*48000+312), ""},
			{"a.m4a", "audio/mp4", mediatest.M4A(600, 1500, "soun"), ""},
		}, want: []file{{"AUDIO", "audio/mpeg", 0, 0, 10 * 1152 / 44100.0}, {"AUDIO", "audio/ogg", 0, 0, 3}, {"AUDIO", "audio/mp4", 0, 0, 2.5}}},
		{name: "phone photo with a second image", files: []upload{{"mpf.jpg", "image/jpeg", mediatest.JPEGMPF(t, 16, 8), ""}},
			want: []file{{"IMAGE", "image/jpeg", 16, 8, 0}}},
		{name: "tagged audio", files: []upload{
			{"t.opus", "audio/ogg", mediatest.OggOpusTagged(312, 2*48000+312, 100_000), ""},
			{"t.m4a", "audio/mp4", mediatest.M4AWithMetadata(1000, 3500, false, false), ""},
		}, want: []file{{"AUDIO", "audio/ogg", 0, 0, 2}, {"AUDIO", "audio/mp4", 0, 0, 3.5}}},
		{name: "png whose pixels do not decode", files: []upload{{"big.png", "image/png", mediatest.PNGCorrupt(7000, 7000), ""}}, code: "BAD_USER_INPUT"},
		{name: "decompression bomb", files: []upload{{"big.png", "image/png", mediatest.PNGHeader(20000, 20000), ""}}, code: "BAD_USER_INPUT"},
		{name: "zip", files: []upload{{"x.zip", "image/jpeg", []byte("PK\x03\x04\x14\x00 zipped"), ""}}, code: "BAD_USER_INPUT"},
		{name: "second file invalid", files: []upload{{"ok.jpg", "image/jpeg", jpg, ""}, {"x.zip", "image/png", []byte("PK\x03\x04"), ""}}, code: "BAD_USER_INPUT"},
		{name: "alt text with a bidi override", files: []upload{{"ok.jpg", "image/jpeg", jpg, "\u202egnp"}}, code: "BAD_USER_INPUT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := s.keys(t)
			posts := s.MustDo(t, author.Token, mediaPostsCountDoc, map[string]any{"u": author.ID}).Int("user.postsCount")
			r := gatewaytest.Send(t, multipartRequest(t, s.URL, author.Token, nil, tt.files))
			if r.Code() != tt.code {
				t.Fatalf("code %q (%+v), want %q", r.Code(), r.Errors, tt.code)
			}
			if tt.code != "" {
				// All or nothing: no post, and no file of it stored.
				if after := s.keys(t); len(after) != len(before) {
					t.Errorf("files stored by a refused post: %v, before %v", after, before)
				}
				if n := s.MustDo(t, author.Token, mediaPostsCountDoc, map[string]any{"u": author.ID}).Int("user.postsCount"); n != posts {
					t.Errorf("postsCount %d after a refused post, want %d", n, posts)
				}
				return
			}
			media, _ := r.Get("createPost.media").([]any)
			if len(media) != len(tt.want) {
				t.Fatalf("media = %v", r.Get("createPost.media"))
			}
			for i, w := range tt.want {
				m := media[i].(map[string]any)
				got := file{kind: m["kind"].(string), mime: m["mimeType"].(string)}
				if v, ok := m["width"].(float64); ok {
					got.width, got.height = int(v), int(m["height"].(float64))
				}
				if v, ok := m["duration"].(float64); ok {
					got.duration = v
				}
				if fmt.Sprint(got) != fmt.Sprint(w) {
					t.Errorf("media %d = %+v, want %+v", i, got, w)
				}
				status, h, body := s.fetch(t, m["url"].(string), "")
				if status != 200 || h.Get("Content-Type") != w.mime || h.Get("X-Content-Type-Options") != "nosniff" ||
					!strings.HasPrefix(h.Get("Cache-Control"), "public") || len(body) != int(m["bytes"].(float64)) {
					t.Errorf("GET %s = %d %v (%d bytes)", m["url"], status, h, len(body))
				}
				if bytes.Contains(body, []byte("Exif")) || bytes.Contains(body, []byte("GPSLatitude")) || bytes.Contains(body, []byte(mediatest.Secret)) {
					t.Errorf("the served file still holds its location metadata")
				}
			}
			if tt.files[0].alt != "" && r.Str("createPost.media.0.alt") != tt.files[0].alt {
				t.Errorf("alt = %q", r.Str("createPost.media.0.alt"))
			}
		})
	}
}

// TestMediaRanges: files are served in ranges (audio players seek).
func TestMediaRanges(t *testing.T) {
	s := newMediaServer(t, httpapi.Uploads{})
	author := s.Register(t, "author")
	mp3 := mediatest.MP3Frames(20) // nothing to strip: stored as sent
	r := gatewaytest.Send(t, multipartRequest(t, s.URL, author.Token, nil, []upload{{"a.mp3", "audio/mpeg", mp3, ""}}))
	url := r.Str("createPost.media.0.url")
	status, h, body := s.fetch(t, url, "", "Range", "bytes=100-199")
	if status != http.StatusPartialContent || len(body) != 100 || !bytes.Equal(body, mp3[100:200]) ||
		h.Get("Content-Range") != fmt.Sprintf("bytes 100-199/%d", len(mp3)) {
		t.Errorf("range = %d %q, %d bytes", status, h.Get("Content-Range"), len(body))
	}
}

func TestMultipartRefusals(t *testing.T) {
	s := newMediaServer(t, httpapi.Uploads{MaxFileBytes: 64 << 10, MaxFiles: 4, MaxRequestBytes: 200 << 10})
	author := s.Register(t, "author")
	jpg := mediatest.JPEGWithGPS(t, 8, 8)
	tests := []struct {
		name   string
		tweak  func(*http.Request)
		files  []upload
		status int
		code   string
	}{
		{"no preflight header", func(r *http.Request) { r.Header.Del("GraphQL-Require-Preflight") }, []upload{{"a.jpg", "image/jpeg", jpg, ""}}, 400, "BAD_USER_INPUT"},
		{"empty preflight header", func(r *http.Request) { r.Header.Set("GraphQL-Require-Preflight", "") }, []upload{{"a.jpg", "image/jpeg", jpg, ""}}, 400, "BAD_USER_INPUT"},
		{"apollo's preflight header", func(r *http.Request) {
			r.Header.Del("GraphQL-Require-Preflight")
			r.Header.Set("Apollo-Require-Preflight", "true")
		}, []upload{{"a.jpg", "image/jpeg", jpg, ""}}, 200, ""},
		{"anonymous", func(r *http.Request) { r.Header.Del("Authorization") }, []upload{{"a.jpg", "image/jpeg", jpg, ""}}, 401, "UNAUTHENTICATED"},
		{"a bad token", func(r *http.Request) { r.Header.Set("Authorization", "Bearer nope") }, []upload{{"a.jpg", "image/jpeg", jpg, ""}}, 401, "UNAUTHENTICATED"},
		// 401, not 413: the token is checked before the body is read.
		{"a bad token and too large a body", func(r *http.Request) { r.Header.Set("Authorization", "Bearer nope") },
			[]upload{{"big.jpg", "image/jpeg", bytes.Repeat([]byte{0xff}, 300<<10), ""}}, 401, "UNAUTHENTICATED"},
		{"file over the limit", nil, []upload{{"big.jpg", "image/jpeg", bytes.Repeat([]byte{0xff}, 100<<10), ""}}, 413, "BAD_USER_INPUT"},
		{"body over the limit, streamed", func(r *http.Request) {
			// No Content-Length: the limit holds while reading.
			body, _ := io.ReadAll(r.Body)
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), -1
		}, []upload{{"a.jpg", "image/jpeg", bytes.Repeat([]byte{1}, 60<<10), ""}, {"b.jpg", "image/jpeg", bytes.Repeat([]byte{2}, 60<<10), ""},
			{"c.jpg", "image/jpeg", bytes.Repeat([]byte{3}, 60<<10), ""}, {"d.jpg", "image/jpeg", bytes.Repeat([]byte{4}, 60<<10), ""}}, 413, "BAD_USER_INPUT"},
		{"body over the limit, announced", nil, []upload{{"a.jpg", "image/jpeg", bytes.Repeat([]byte{1}, 60<<10), ""}, {"b.jpg", "image/jpeg", bytes.Repeat([]byte{2}, 60<<10), ""},
			{"c.jpg", "image/jpeg", bytes.Repeat([]byte{3}, 60<<10), ""}, {"d.jpg", "image/jpeg", bytes.Repeat([]byte{4}, 60<<10), ""}}, 413, "BAD_USER_INPUT"},
		{"too many files", nil, []upload{{"a.jpg", "image/jpeg", jpg, ""}, {"b.jpg", "image/jpeg", jpg, ""}, {"c.jpg", "image/jpeg", jpg, ""},
			{"d.jpg", "image/jpeg", jpg, ""}, {"e.jpg", "image/jpeg", jpg, ""}}, 400, "BAD_USER_INPUT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := multipartRequest(t, s.URL, author.Token, nil, tt.files)
			if tt.tweak != nil {
				tt.tweak(req)
			}
			r := gatewaytest.Send(t, req)
			if r.Status != tt.status || r.Code() != tt.code {
				t.Fatalf("status %d code %q (%+v), want %d %q", r.Status, r.Code(), r.Errors, tt.status, tt.code)
			}
			// The server keeps serving.
			if me := s.MustDo(t, author.Token, `{ me { id } }`, nil); me.Str("me.id") != author.ID {
				t.Fatalf("me after the refusal = %+v", me.Data)
			}
		})
	}
	// A query is not sent as multipart.
	req := multipartRequest(t, s.URL, author.Token, nil, []upload{{"a.jpg", "image/jpeg", jpg, ""}})
	body, _ := io.ReadAll(req.Body)
	body = bytes.Replace(body, []byte(`"mutation(`), []byte(`"query(   `), 1)
	req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	if r := gatewaytest.Send(t, req); r.Status != 400 || r.Code() != "BAD_USER_INPUT" {
		t.Errorf("multipart query: %d %q", r.Status, r.Code())
	}
}

// TestRestrictedMedia: a restricted post's files are served only through
// signed addresses, to the viewer they were signed for, while the post
// exists; deleting a post deletes its files through the fan-out job.
func TestRestrictedMedia(t *testing.T) {
	s := newMediaServer(t, httpapi.Uploads{})
	author, friend, outsider := s.Register(t, "author"), s.Register(t, "friend"), s.Register(t, "outsider")
	r := gatewaytest.Send(t, multipartRequest(t, s.URL, author.Token, map[string]any{"onlyTo": []string{friend.ID}},
		[]upload{{"a.png", "image/png", mediatest.PNGWithText(t, 3, 3), ""}}))
	if r.Code() != "" {
		t.Fatalf("createPost: %+v", r.Errors)
	}
	id, authorURL := r.Str("createPost.id"), r.Str("createPost.media.0.url")
	friendURL := s.MustDo(t, friend.Token, `query($id: ID!) { post(id: $id) { media { url } } }`, map[string]any{"id": id}).Str("post.media.0.url")
	path, _, _ := strings.Cut(authorURL, "?")
	if authorURL == friendURL || !strings.Contains(authorURL, "sig=") {
		t.Fatalf("addresses of a restricted post: author %q, friend %q", authorURL, friendURL)
	}
	tampered := strings.Replace(authorURL, "v="+author.ID, "v="+outsider.ID, 1)
	tests := []struct {
		name, url, token string
		status           int
	}{
		{"author, own address", authorURL, author.Token, 200},
		{"friend, own address, no token", friendURL, "", 200},
		{"friend, own address", friendURL, friend.Token, 200},
		{"outsider with the author's address", authorURL, outsider.Token, 404},
		{"outsider with the viewer changed", tampered, outsider.Token, 404},
		{"no signature", path, "", 404},
		{"no signature, the author's token", path, author.Token, 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, h, _ := s.fetch(t, tt.url, tt.token)
			if status != tt.status {
				t.Fatalf("GET = %d, want %d", status, tt.status)
			}
			if status == 200 && h.Get("Cache-Control") != "private, no-store" {
				t.Errorf("Cache-Control %q", h.Get("Cache-Control"))
			}
		})
	}
	// Expired: a server whose clock is past the address's expiry.
	s.MediaAddresses.Now = func() time.Time { return time.Now().Add(time.Hour) }
	if status, _, _ := s.fetch(t, friendURL, ""); status != 404 {
		t.Errorf("an expired address = %d, want 404", status)
	}
	s.MediaAddresses.Now = nil
	if len(s.keys(t)) != 1 {
		t.Fatalf("keys = %v", s.keys(t))
	}
	s.MustDo(t, author.Token, mediaDeleteDoc, map[string]any{"id": id})
	for _, u := range []string{authorURL, friendURL} {
		if status, _, _ := s.fetch(t, u, ""); status != 404 {
			t.Errorf("a deleted post's file = %d, want 404", status)
		}
	}
	s.fanout.Drain(t)
	if keys := s.keys(t); len(keys) != 0 {
		t.Errorf("a deleted post's files are still stored: %v", keys)
	}
}

// TestUploadBudget: every file spends one event of the user's upload
// budget; past it the post is refused and nothing is stored.
func TestUploadBudget(t *testing.T) {
	s := newMediaServer(t, httpapi.Uploads{}, &gateway.Abuse{RateLimits: map[string]ratelimit.Limit{
		ratelimit.RuleUploadUser: {Count: 3, Per: time.Hour},
	}})
	author := s.Register(t, "author")
	jpg := mediatest.JPEGWithGPS(t, 8, 8)
	two := []upload{{"a.jpg", "image/jpeg", jpg, ""}, {"b.jpg", "image/jpeg", jpg, ""}}
	if r := gatewaytest.Send(t, multipartRequest(t, s.URL, author.Token, nil, two)); r.Code() != "" {
		t.Fatalf("first post: %+v", r.Errors)
	}
	r := gatewaytest.Send(t, multipartRequest(t, s.URL, author.Token, nil, two))
	if r.Code() != "RATE_LIMITED" {
		t.Fatalf("over the budget: %q %+v", r.Code(), r.Errors)
	}
	if keys := s.keys(t); len(keys) != 2 {
		t.Errorf("stored files = %v, want the first post's two", keys)
	}
}

// TestUploadsSavedInTurn: while every place to save files is taken, a
// post with a file waits, storing nothing; it is made once one frees.
func TestUploadsSavedInTurn(t *testing.T) {
	s := newMediaServer(t, httpapi.Uploads{})
	author := s.Register(t, "author")
	saving := s.Resolver.Attachments.Saving
	if cap(saving) < 1 {
		t.Fatalf("saving places: %d, want at least one", cap(saving))
	}
	for range cap(saving) {
		saving <- struct{}{}
	}
	jpg := mediatest.JPEGWithGPS(t, 8, 8)
	done := make(chan string, 1)
	go func() {
		r := gatewaytest.Send(t, multipartRequest(t, s.URL, author.Token, nil, []upload{{"a.jpg", "image/jpeg", jpg, ""}}))
		done <- fmt.Sprintf("%q %v", r.Code(), r.Errors)
	}()
	select {
	case r := <-done:
		t.Fatalf("saved while every place was taken: %s", r)
	case <-time.After(300 * time.Millisecond):
	}
	if keys := s.keys(t); len(keys) != 0 {
		t.Errorf("stored while waiting: %v", keys)
	}
	<-saving
	if r := <-done; r != `"" []` {
		t.Errorf("after a place freed: %s, want the post made", r)
	}
	if keys := s.keys(t); len(keys) != 1 {
		t.Errorf("stored files = %v, want one", keys)
	}
}
