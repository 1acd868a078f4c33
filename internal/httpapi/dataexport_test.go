package httpapi_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/httpapi"
	"github.com/socialgw/gateway/internal/media/mediatest"
	"github.com/socialgw/gateway/internal/social"
)

const (
	exportRequestDoc = `mutation { requestDataExport { id status url bytes } }`
	exportReadDoc    = `{ dataExport { id status createdAt url bytes } }`
)

// exportLife gives alice a realistic life on s: posts (one with an
// image), a comment, likes (one taken back), follows both ways, a block,
// a mute, a list, a bookmark, and notifications from bob.
func exportLife(t *testing.T, s *mediaServer) (alice gatewaytest.User, want map[string][]string) {
	t.Helper()
	alice, bob, carol, dave := s.Register(t, "alice"), s.Register(t, "bob"), s.Register(t, "carol"), s.Register(t, "dave")
	do := func(u gatewaytest.User, q string, vars map[string]any) *gatewaytest.Response {
		return s.MustDo(t, u.Token, q, vars)
	}
	post := func(u gatewaytest.User, text string) string {
		return do(u, `mutation($c: String!) { createPost(input: {content: $c}) { id } }`, map[string]any{"c": text}).Get("createPost.id").(string)
	}
	first := post(alice, "first post")
	r := gatewaytest.Send(t, multipartRequest(t, s.URL, alice.Token, map[string]any{"content": "a cat"},
		[]upload{{"cat.jpg", "image/jpeg", mediatest.JPEGWithGPS(t, 40, 30), "the cat"}}))
	if len(r.Errors) > 0 {
		t.Fatalf("post with an image: %+v", r.Errors)
	}
	cat := r.Get("createPost.id").(string)
	bobs, carols := post(bob, "bob's post"), post(carol, "carol's post")
	for _, f := range [][2]gatewaytest.User{{alice, bob}, {alice, carol}, {bob, alice}} {
		do(f[0], `mutation($u: ID!) { follow(userId: $u) { id } }`, map[string]any{"u": f[1].ID})
	}
	do(alice, `mutation($u: ID!) { block(userId: $u) { id } }`, map[string]any{"u": dave.ID})
	do(alice, `mutation($u: ID!) { mute(userId: $u) { id } }`, map[string]any{"u": carol.ID})
	do(alice, `mutation($p: ID!) { likePost(postId: $p) { id } }`, map[string]any{"p": bobs})
	do(alice, `mutation($p: ID!) { likePost(postId: $p) { id } }`, map[string]any{"p": carols})
	do(alice, `mutation($p: ID!) { unlikePost(postId: $p) { id } }`, map[string]any{"p": carols})
	do(alice, `mutation($p: ID!) { addComment(postId: $p, content: "nice one") { id } }`, map[string]any{"p": bobs})
	do(alice, `mutation($p: ID!) { bookmark(postId: $p) { id } }`, map[string]any{"p": bobs})
	list := do(alice, `mutation { createList(title: "friends") { id } }`, nil).Get("createList.id").(string)
	do(alice, `mutation($l: ID!, $u: [ID!]!) { addToList(listId: $l, userIds: $u) { id } }`, map[string]any{"l": list, "u": []string{bob.ID}})
	do(bob, `mutation($p: ID!) { likePost(postId: $p) { id } }`, map[string]any{"p": first})
	do(bob, `mutation($p: ID!) { addComment(postId: $p, content: "welcome") { id } }`, map[string]any{"p": first})
	s.fanout.Drain(t)
	return alice, map[string][]string{
		"posts": {cat, first}, "likes": {bobs}, "bookmarks": {bobs}, "comments": {bobs},
		"follows": {carol.Name, bob.Name}, "followers": {bob.Name}, "blocks": {dave.Name}, "mutes": {carol.Name},
		"lists": {"friends:" + bob.Name}, "notifications": {"COMMENT", "FOLLOW", "LIKE"},
	}
}

// An export of an account with a realistic life: requested, prepared by
// the export queue's worker into S3, fetched at its signed address by
// whoever holds it, unzipped, and each file's content checked.
func TestDataExportArchive(t *testing.T) {
	s := newMediaServer(t, httpapi.Uploads{})
	exports := gatewaytest.NewExports(t, s.Server)
	alice, want := exportLife(t, s)

	if r := s.MustDo(t, alice.Token, exportReadDoc, nil); r.Get("dataExport") != nil {
		t.Fatalf("dataExport before any request = %v", r.Get("dataExport"))
	}
	r := s.MustDo(t, alice.Token, exportRequestDoc, nil)
	id := r.Get("requestDataExport.id")
	if r.Get("requestDataExport.status") != "PENDING" || r.Get("requestDataExport.url") != nil {
		t.Fatalf("requestDataExport = %v", r.Data)
	}
	if r := s.Do(t, alice.Token, exportRequestDoc, nil); r.Code() != "BAD_USER_INPUT" {
		t.Fatalf("a second request while pending: %+v, want BAD_USER_INPUT", r.Errors)
	}
	if r := s.Do(t, "", exportReadDoc, nil); r.Code() != "UNAUTHENTICATED" {
		t.Fatalf("dataExport signed out: %+v", r.Errors)
	}
	exports.Drain(t)
	r = s.MustDo(t, alice.Token, exportReadDoc, nil)
	addr, _ := r.Get("dataExport.url").(string)
	if r.Get("dataExport.id") != id || r.Get("dataExport.status") != "READY" || !strings.HasPrefix(addr, httpapi.ExportPath) {
		t.Fatalf("dataExport once prepared = %v", r.Data)
	}
	if r := s.Do(t, alice.Token, exportRequestDoc, nil); r.Code() != "BAD_USER_INPUT" {
		t.Fatalf("a second export the same day: %+v, want BAD_USER_INPUT", r.Errors)
	}
	if r := s.MustDo(t, alice.Token, exportReadDoc, nil); r.Get("dataExport.id") != id {
		t.Fatalf("a refused request changed the export: %v", r.Data)
	}

	// Whoever holds the address fetches the archive, with no token.
	status, h, body := s.fetch(t, addr, "")
	if status != http.StatusOK || h.Get("Content-Type") != "application/zip" || float64(len(body)) != r.Get("dataExport.bytes") {
		t.Fatalf("GET the archive: %d %v, %d bytes (bytes says %v)", status, h, len(body), r.Get("dataExport.bytes"))
	}
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		files[f.Name], _ = io.ReadAll(rc)
		rc.Close()
	}
	read := func(name string, v any) {
		t.Helper()
		if err := json.Unmarshal(files[name], v); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, files[name])
		}
	}
	var profile struct{ ID, Name, Email string }
	read("profile.json", &profile)
	if profile.ID != alice.ID || profile.Name != alice.Name || profile.Email != alice.Name+"@example.com" {
		t.Errorf("profile.json = %+v", profile)
	}
	var posts []struct {
		ID, Content string
		Media       []struct{ File, MIME, Alt string }
	}
	read("posts.json", &posts)
	var postIDs []string
	for _, p := range posts {
		postIDs = append(postIDs, p.ID)
	}
	if !slices.Equal(postIDs, want["posts"]) || posts[0].Content != "a cat" || len(posts[0].Media) != 1 || posts[1].Content != "first post" {
		t.Fatalf("posts.json = %+v, want posts %v", posts, want["posts"])
	}
	m := posts[0].Media[0]
	if img := files[m.File]; len(img) == 0 || m.Alt != "the cat" || !bytes.HasPrefix(img, []byte{0xff, 0xd8}) || bytes.Contains(img, []byte("Exif")) {
		t.Errorf("the post's image %s: %d bytes in the archive, %+v", m.File, len(img), m)
	}
	var comments []struct{ PostID, Content string }
	read("comments.json", &comments)
	if len(comments) != 1 || comments[0].PostID != want["comments"][0] || comments[0].Content != "nice one" {
		t.Errorf("comments.json = %+v", comments)
	}
	for _, name := range []string{"likes", "bookmarks"} {
		var refs []struct{ PostID string }
		read(name+".json", &refs)
		var got []string
		for _, x := range refs {
			got = append(got, x.PostID)
		}
		if !slices.Equal(got, want[name]) {
			t.Errorf("%s.json = %v, want %v", name, got, want[name])
		}
	}
	for _, name := range []string{"follows", "followers", "blocks", "mutes"} {
		var users []struct{ UserID, Name string }
		read(name+".json", &users)
		var got []string
		for _, u := range users {
			got = append(got, u.Name)
		}
		if name == "follows" {
			slices.Sort(got)
			slices.Sort(want[name])
		}
		if !slices.Equal(got, want[name]) {
			t.Errorf("%s.json = %v, want %v", name, got, want[name])
		}
	}
	var lists []struct {
		Title   string
		Members []struct{ Name string }
	}
	read("lists.json", &lists)
	if len(lists) != 1 || len(lists[0].Members) != 1 || lists[0].Title+":"+lists[0].Members[0].Name != want["lists"][0] {
		t.Errorf("lists.json = %+v", lists)
	}
	var notes []struct{ Kind string }
	read("notifications.json", &notes)
	var kinds []string
	for _, n := range notes {
		kinds = append(kinds, n.Kind)
	}
	slices.Sort(kinds)
	if !slices.Equal(kinds, want["notifications"]) {
		t.Errorf("notifications.json kinds = %v, want %v", kinds, want["notifications"])
	}
	names := []string{"profile.json", "posts.json", "comments.json", "likes.json", "follows.json", "followers.json",
		"blocks.json", "mutes.json", "lists.json", "bookmarks.json", "notifications.json", m.File}
	for name := range files {
		if !slices.Contains(names, name) {
			t.Errorf("unexpected file %s in the archive", name)
		}
	}
	if len(files) != len(names) {
		t.Errorf("archive holds %d files, want %d", len(files), len(names))
	}
}

// An archive's address works only as signed and until it expires: a
// forged signature, another account's or export's path, a changed expiry
// and an expired address all get 403 with no content.
func TestDataExportAddresses(t *testing.T) {
	s := newMediaServer(t, httpapi.Uploads{})
	exports := gatewaytest.NewExports(t, s.Server)
	alice, bob := s.Register(t, "alice"), s.Register(t, "bob")
	s.MustDo(t, alice.Token, exportRequestDoc, nil)
	exports.Drain(t)
	addr := s.MustDo(t, alice.Token, exportReadDoc, nil).Get("dataExport.url").(string)
	id := s.MustDo(t, alice.Token, exportReadDoc, nil).Get("dataExport.id").(string)
	u, _ := url.Parse(addr)
	q := u.Query()
	exp, sig := q.Get("exp"), q.Get("sig")

	now := time.Now()
	signer := &httpapi.ExportAddresses{Key: []byte(gatewaytest.MediaKey), Now: func() time.Time { return now }}
	other := signer.URL(&social.DataExport{ID: "0123456789abcdef01234567", UserID: alice.ID, Status: social.ExportReady, Until: now.Add(time.Hour)})
	bobs := signer.URL(&social.DataExport{ID: id, UserID: bob.ID, Status: social.ExportReady, Until: now.Add(time.Hour)})
	cases := []struct {
		name, addr string
		status     int
	}{
		{"as signed", addr, http.StatusOK},
		{"forged signature", u.Path + "?exp=" + exp + "&sig=" + strings.Repeat("A", len(sig)), http.StatusForbidden},
		{"no signature", u.Path + "?exp=" + exp, http.StatusForbidden},
		{"expiry moved", u.Path + "?exp=" + exp + "9&sig=" + sig, http.StatusForbidden},
		{"signature of another path", strings.Replace(u.Path, alice.ID, bob.ID, 1) + "?exp=" + exp + "&sig=" + sig, http.StatusForbidden},
		{"signed, but not the latest export", other, http.StatusForbidden},
		{"signed, for an account with no export", bobs, http.StatusForbidden},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, h, body := s.fetch(t, tc.addr, "")
			if status != tc.status || (status != http.StatusOK && (len(body) > 0 || h.Get("Content-Type") == "application/zip")) {
				t.Fatalf("GET %s: %d, %d bytes, want %d", tc.addr, status, len(body), tc.status)
			}
		})
	}

	// Expired: the same address, served by a handler whose clock is past
	// its expiry.
	later := &httpapi.ExportAddresses{Key: []byte(gatewaytest.MediaKey), Now: func() time.Time { return now.Add(2 * time.Hour) }}
	h := later.Handler(s.files, s.Exports)
	for _, a := range []string{addr, later.URL(&social.DataExport{ID: id, UserID: alice.ID, Status: social.ExportReady, Until: now.Add(time.Hour)})} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, a, nil))
		if rec.Code != http.StatusForbidden || rec.Body.Len() > 0 {
			t.Errorf("expired address %s: %d, %d bytes, want 403 and nothing", a, rec.Code, rec.Body.Len())
		}
	}
	// An address never outlives its archive.
	if a := signer.URL(&social.DataExport{ID: id, UserID: alice.ID, Status: social.ExportReady, Until: now.Add(10 * time.Minute)}); !strings.Contains(a, "exp="+strconv.FormatInt(now.Add(10*time.Minute).Unix(), 10)) {
		t.Errorf("address past its archive's end: %s", a)
	}
}
