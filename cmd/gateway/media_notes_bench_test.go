package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/media/mediatest"
)

// Benchmarks of media uploads and notifications against the gateway as a
// separate process (docs/performance.md, "Media and notifications").

// uploadPost sends createPost with one file as a GraphQL multipart
// request and returns the post's id.
func uploadPost(tb testing.TB, base, token, name, mime string, data []byte) string {
	tb.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	ops, _ := json.Marshal(map[string]any{"query": `mutation($i: CreatePostInput!) { createPost(input: $i) { id } }`,
		"variables": map[string]any{"i": map[string]any{"content": "with a file", "media": []any{map[string]any{"file": nil}}}}})
	_ = mw.WriteField("operations", string(ops))
	_ = mw.WriteField("map", `{"0": ["variables.i.media.0.file"]}`)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="0"; filename="`+name+`"`)
	h.Set("Content-Type", mime)
	pw, _ := mw.CreatePart(h)
	_, _ = pw.Write(data)
	_ = mw.Close()
	req, _ := http.NewRequest(http.MethodPost, base+"/query", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("GraphQL-Require-Preflight", "1")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Data   struct{ CreatePost struct{ ID string } }
		Errors []any
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Data.CreatePost.ID == "" {
		tb.Fatalf("upload: %d %v %+v", resp.StatusCode, err, out.Errors)
	}
	return out.Data.CreatePost.ID
}

// procKB reads a field of /proc/<pid>/status in kB (VmRSS, VmHWM).
func procKB(tb testing.TB, gw *gatewayProcess, field string) float64 {
	tb.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", gw.cmd.Process.Pid))
	if err != nil {
		tb.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			n, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return n
		}
	}
	tb.Fatalf("no %s in /proc status", field)
	return 0
}

const userPageDoc = `query($u: ID!) { userTimeline(userId: $u, first: 20) { edges { node {
	id content createdAt author { id name } likesCount viewerHasLiked media { id kind url width height } } } } }`

// pageTimes reads userTimeline pages of author as reader for d and
// returns their latencies, sorted.
func pageTimes(tb testing.TB, base string, reader liveUser, author string, d time.Duration) []time.Duration {
	tb.Helper()
	var out []time.Duration
	for end := time.Now().Add(d); time.Now().Before(end); {
		start := time.Now()
		must(tb, gatewaytest.Post(tb, base, reader.token, userPageDoc, map[string]any{"u": author}))
		out = append(out, time.Since(start))
	}
	slices.Sort(out)
	return out
}

func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[min(len(d)-1, int(q*float64(len(d))))]
}

// BenchmarkUploads sends 20 createPost requests of a 10 MB MP3 at once,
// while another client reads a 20-post page in a loop: the gateway's
// resident set when idle and at its peak during the uploads (VmRSS, and
// VmHWM reset just before them), and the other client's page latency
// before and during the uploads.
func BenchmarkUploads(b *testing.B) {
	f := newRedisFixture(b, time.Hour)
	env := maps.Clone(f.env)
	env["MEDIA_DIR"] = b.TempDir()
	env["RATE_LIMIT_UPLOAD"] = "off"
	gw := startGatewayProcess(b, env)
	reader, author := f.user(b, "reader"), f.user(b, "author")
	for i := range 20 {
		createPost(b, gw.url, author, fmt.Sprint("text ", i))
	}
	uploaders := make([]liveUser, 20)
	for i := range uploaders {
		uploaders[i] = f.user(b, "uploader")
	}
	mp3 := mediatest.MP3Frames(10_000_000 / 417)
	uploadPost(b, gw.url, uploaders[0].token, "warm.mp3", "audio/mpeg", mediatest.MP3Frames(100))
	pageTimes(b, gw.url, reader, author.id, time.Second) // warm-up
	for b.Loop() {
		idle := pageTimes(b, gw.url, reader, author.id, 3*time.Second)
		rss, hwm := procKB(b, gw, "VmRSS"), procKB(b, gw, "VmHWM")
		// Writing 5 to clear_refs resets VmHWM to the current resident
		// set: what it reads after is the peak during the uploads.
		if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", gw.cmd.Process.Pid), []byte("5"), 0); err != nil {
			b.Fatal(err)
		}
		var wg sync.WaitGroup
		start := time.Now()
		for _, u := range uploaders {
			wg.Go(func() { uploadPost(b, gw.url, u.token, "big.mp3", "audio/mpeg", mp3) })
		}
		var busy []time.Duration
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
	read:
		for {
			select {
			case <-done:
				break read
			default:
				busy = append(busy, pageTimes(b, gw.url, reader, author.id, 50*time.Millisecond)...)
			}
		}
		took := time.Since(start)
		slices.Sort(busy)
		peak := procKB(b, gw, "VmHWM")
		b.ReportMetric(rss/1024, "idle-RSS-MB")
		b.ReportMetric(hwm/1024, "peak-since-start-MB")
		b.ReportMetric(peak/1024, "peak-RSS-MB")
		b.ReportMetric((peak-rss)/1024, "peak-over-idle-MB")
		b.ReportMetric(took.Seconds(), "s/20-uploads")
		b.ReportMetric(float64(quantile(idle, 0.5).Microseconds())/1000, "page-p50-idle-ms")
		b.ReportMetric(float64(quantile(busy, 0.5).Microseconds())/1000, "page-p50-uploading-ms")
		b.ReportMetric(float64(len(busy)), "pages-during")
	}
}

// BenchmarkImagePageRoundTrips reads the same 20-post userTimeline page
// of an author whose posts each carry an image and of one whose posts are
// text only, and counts the gateway's Redis round trips and commands per
// page from its own metrics (no fan-out worker in the process, so nothing
// else talks to Redis meanwhile).
func BenchmarkImagePageRoundTrips(b *testing.B) {
	f := newRedisFixture(b, time.Hour)
	env := maps.Clone(f.env)
	env["MEDIA_DIR"] = b.TempDir()
	env["RATE_LIMIT_UPLOAD"] = "off"
	env["FANOUT_WORKER"] = "false"
	gw := startGatewayProcess(b, env)
	reader, text, images := f.user(b, "reader"), f.user(b, "text"), f.user(b, "images")
	jpg := mediatest.JPEGWithGPS(b, 64, 48)
	for i := range 20 {
		createPost(b, gw.url, text, fmt.Sprint("text ", i))
		uploadPost(b, gw.url, images.token, "p.jpg", "image/jpeg", jpg)
	}
	for _, author := range []liveUser{text, images} {
		b.Run(author.name[:strings.IndexByte(author.name, '_')], func(b *testing.B) {
			pageTimes(b, gw.url, reader, author.id, 200*time.Millisecond) // warm-up
			before := metrics(b, gw)
			n := 0
			for b.Loop() {
				must(b, gatewaytest.Post(b, gw.url, reader.token, userPageDoc, map[string]any{"u": author.id}))
				n++
			}
			after := metrics(b, gw)
			b.ReportMetric((after["gateway_redis_round_trips_total"]-before["gateway_redis_round_trips_total"])/float64(n), "round-trips/page")
			b.ReportMetric((after["gateway_redis_commands_total"]-before["gateway_redis_commands_total"])/float64(n), "commands/page")
		})
	}
}

// BenchmarkLikeToNotification measures a like made through the gateway
// (its in-process worker runs the note job) to notificationAdded at each
// of 10 subscribers of the post's author: every like is by a new user, so
// the one notification grows and arrives again each time.
func BenchmarkLikeToNotification(b *testing.B) {
	f := newRedisFixture(b, time.Hour)
	gw := startGatewayProcess(b, f.env)
	owner := f.user(b, "owner")
	post := createPost(b, gw.url, owner, "like me")
	subs := make([]*noteSub, 10)
	for i := range subs {
		subs[i] = subscribeNotes(b, gw.url, owner.token, "")
	}
	like := `mutation($p: ID!) { likePost(postId: $p) { id } }`
	likeAndWait := func() []time.Duration {
		u := f.user(b, "liker")
		must(b, gatewaytest.Post(b, gw.url, u.token, like, map[string]any{"p": post}))
		answered := time.Now()
		var out []time.Duration
		for _, s := range subs {
			select {
			case e := <-s.events:
				if !strings.HasPrefix(e.view, "LIKE ") {
					b.Fatalf("event %q", e.view)
				}
				out = append(out, e.at.Sub(answered))
			case <-time.After(30 * time.Second):
				b.Fatal("no notification within 30s")
			}
		}
		return out
	}
	likeAndWait() // every subscriber is listening once each has had one
	var lat []time.Duration
	for b.Loop() {
		lat = append(lat, likeAndWait()...)
	}
	slices.Sort(lat)
	b.ReportMetric(float64(quantile(lat, 0.5).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(quantile(lat, 0.99).Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
}
