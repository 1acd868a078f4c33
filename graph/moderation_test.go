package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/gateway"
	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/moderation"
	"github.com/socialgw/gateway/internal/ratelimit"
)

const (
	reportDoc  = `mutation($i: ReportInput!) { report(input: $i) { id status reason action post { id } comment { id } user { id } } }`
	resolveDoc = `mutation($id: ID!, $a: ModerationAction!) { resolveReport(id: $id, action: $a) { id status action } }`
	reportsDoc = `query($s: ReportStatus, $first: Int, $after: String) { reports(status: $s, first: $first, after: $after) {
		edges { cursor node { id status reason action post { id content } comment { id content } user { id name } } }
		pageInfo { hasNextPage endCursor } } }`
)

// lockedBuffer is a log sink the gateway's goroutines and the test share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// lines returns the JSON log records whose msg is msg.
func (l *lockedBuffer) lines(t *testing.T, msg string) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.b.String()), "\n") {
		var rec map[string]any
		if line == "" {
			continue
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}

// modServer is a gateway whose one moderator is mod, with a fan-out
// worker and the moderation log in a buffer.
type modServer struct {
	*gatewaytest.Server
	mod gatewaytest.User
	log *lockedBuffer
	w   *gatewaytest.Fanout
}

func newModServer(t *testing.T, o gatewaytest.Options) *modServer {
	t.Helper()
	buf := &lockedBuffer{}
	cfg := gateway.ModerationConfig{Moderators: []string{"  MOD_1"}, Log: slog.New(slog.NewJSONHandler(buf, nil))}
	if o.Moderation != nil {
		cfg.MaxOpenPerReporter = o.Moderation.MaxOpenPerReporter
	}
	o.Moderation = &cfg
	s := gatewaytest.New(t, o)
	mod := s.Register(t, "mod") // the first user of the server: mod_1
	if mod.Name != "mod_1" {
		t.Fatalf("moderator registered as %s", mod.Name)
	}
	return &modServer{Server: s, mod: mod, log: buf, w: gatewaytest.NewFanout(t, s)}
}

func (s *modServer) report(t *testing.T, token string, in map[string]any) *gatewaytest.Response {
	t.Helper()
	if _, ok := in["reason"]; !ok {
		in["reason"] = "spam"
	}
	return s.Do(t, token, reportDoc, map[string]any{"i": in})
}

func (s *modServer) resolve(t *testing.T, token, id, action string) *gatewaytest.Response {
	t.Helper()
	return s.Do(t, token, resolveDoc, map[string]any{"id": id, "a": action})
}

func (s *modServer) comment(t *testing.T, u gatewaytest.User, post, text string) string {
	t.Helper()
	return s.MustDo(t, u.Token, addCommentDoc, map[string]any{"p": post, "c": text}).Str("addComment.id")
}

func TestReport(t *testing.T) {
	s := newModServer(t, gatewaytest.Options{})
	author, reader := s.Register(t, "author"), s.Register(t, "reader")
	post := engNewPost(t, s.Server, author, map[string]any{"content": "buy now"})
	own := engNewPost(t, s.Server, reader, map[string]any{"content": "mine"})
	hidden := engNewPost(t, s.Server, author, map[string]any{"content": "secret", "onlyTo": []string{s.mod.ID}})
	comment := s.comment(t, author, post, "spam comment")
	ownComment := s.comment(t, reader, post, "my comment")

	first := s.report(t, reader.Token, map[string]any{"postId": post, "reason": "  spam  "})
	if len(first.Errors) > 0 || first.Str("report.status") != "OPEN" || first.Str("report.reason") != "spam" ||
		first.Str("report.post.id") != post || first.Get("report.action") != nil {
		t.Fatalf("first report: %+v %+v", first.Data, first.Errors)
	}
	cases := []struct {
		name   string
		token  string
		in     map[string]any
		code   string
		sameAs string // the id the answer must carry ("": a new one)
	}{
		{"the same post again is the same report", reader.Token, map[string]any{"postId": post, "reason": "again"}, "", first.Str("report.id")},
		{"a comment", reader.Token, map[string]any{"commentId": comment}, "", ""},
		{"a user", reader.Token, map[string]any{"userId": author.ID}, "", ""},
		{"oneself", reader.Token, map[string]any{"userId": reader.ID}, "BAD_USER_INPUT", ""},
		{"one's own post", reader.Token, map[string]any{"postId": own}, "BAD_USER_INPUT", ""},
		{"one's own comment", reader.Token, map[string]any{"commentId": ownComment}, "BAD_USER_INPUT", ""},
		{"an unknown post", reader.Token, map[string]any{"postId": "999999"}, "NOT_FOUND", ""},
		{"a post hidden from the reporter", reader.Token, map[string]any{"postId": hidden}, "NOT_FOUND", ""},
		{"an unknown comment", reader.Token, map[string]any{"commentId": "999999"}, "NOT_FOUND", ""},
		{"an unknown user", reader.Token, map[string]any{"userId": "999999"}, "NOT_FOUND", ""},
		{"a malformed id", reader.Token, map[string]any{"userId": "x y"}, "NOT_FOUND", ""},
		{"two targets", reader.Token, map[string]any{"postId": post, "userId": author.ID}, "BAD_USER_INPUT", ""},
		{"no target", reader.Token, map[string]any{}, "BAD_USER_INPUT", ""},
		{"a blank reason", reader.Token, map[string]any{"postId": post, "reason": "   "}, "BAD_USER_INPUT", ""},
		{"an overlong reason", reader.Token, map[string]any{"userId": author.ID, "reason": strings.Repeat("é", 501)}, "BAD_USER_INPUT", ""},
		{"anonymous", "", map[string]any{"postId": post}, "UNAUTHENTICATED", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := gatewaytest.RedisSnapshot(t, s.Redis, s.Prefix()+"{mod}")
			r := s.report(t, c.token, c.in)
			if c.code != "" {
				r.WantCode(t, c.code)
				if d := gatewaytest.DiffSnapshots(before, gatewaytest.RedisSnapshot(t, s.Redis, s.Prefix()+"{mod}")); len(d) > 0 {
					t.Errorf("a refused report wrote: %v", d)
				}
				return
			}
			if len(r.Errors) > 0 {
				t.Fatalf("errors: %+v", r.Errors)
			}
			if id := r.Str("report.id"); c.sameAs != "" && id != c.sameAs || c.sameAs == "" && id == first.Str("report.id") {
				t.Errorf("report id %s, want same as %q", id, c.sameAs)
			}
		})
	}
	// Another reporter's report of the same post is a report of its own.
	other := s.Register(t, "other")
	if id := s.report(t, other.Token, map[string]any{"postId": post}).Str("report.id"); id == "" || id == first.Str("report.id") {
		t.Errorf("another reporter's report: id %q", id)
	}
}

func TestReportBounds(t *testing.T) {
	t.Run("open reports", func(t *testing.T) {
		s := newModServer(t, gatewaytest.Options{Moderation: &gateway.ModerationConfig{MaxOpenPerReporter: 2}})
		reporter := s.Register(t, "reporter")
		var ids []string
		for i := 0; i < 2; i++ {
			ids = append(ids, s.report(t, reporter.Token, map[string]any{"userId": s.Register(t, "u").ID}).Str("report.id"))
		}
		third := s.Register(t, "u")
		s.report(t, reporter.Token, map[string]any{"userId": third.ID}).WantCode(t, "RATE_LIMITED")
		// A resolved report frees its place.
		if r := s.resolve(t, s.mod.Token, ids[0], "DISMISS"); len(r.Errors) > 0 {
			t.Fatal(r.Errors)
		}
		if r := s.report(t, reporter.Token, map[string]any{"userId": third.ID}); len(r.Errors) > 0 {
			t.Fatalf("after a resolve: %+v", r.Errors)
		}
	})
	t.Run("rate limit", func(t *testing.T) {
		s := newModServer(t, gatewaytest.Options{Abuse: &gateway.Abuse{RateLimits: map[string]ratelimit.Limit{
			moderation.RuleReport: {Count: 2, Per: time.Hour}}}})
		reporter := s.Register(t, "reporter")
		for i := 0; i < 2; i++ {
			if r := s.report(t, reporter.Token, map[string]any{"userId": s.Register(t, "u").ID}); len(r.Errors) > 0 {
				t.Fatal(r.Errors)
			}
		}
		s.report(t, reporter.Token, map[string]any{"userId": s.Register(t, "u").ID}).WantCode(t, "RATE_LIMITED")
	})
}

func TestResolveReport(t *testing.T) {
	s := newModServer(t, gatewaytest.Options{})
	author, reader := s.Register(t, "author"), s.Register(t, "reader")
	dismissed := engNewPost(t, s.Server, author, map[string]any{"content": "fine"})
	removed := engNewPost(t, s.Server, author, map[string]any{"content": "bad"})
	comment := s.comment(t, author, dismissed, "bad comment")
	report := func(in map[string]any) string {
		t.Helper()
		r := s.report(t, reader.Token, in)
		if len(r.Errors) > 0 {
			t.Fatal(r.Errors)
		}
		return r.Str("report.id")
	}
	ids := map[string]string{
		"dismiss": report(map[string]any{"postId": dismissed}),
		"post":    report(map[string]any{"postId": removed}),
		"comment": report(map[string]any{"commentId": comment}),
		"user":    report(map[string]any{"userId": author.ID}),
	}

	// The queue, oldest first, paged, with what each names.
	page := s.MustDo(t, s.mod.Token, reportsDoc, map[string]any{"first": 3})
	if page.Str("reports.edges.0.node.id") != ids["dismiss"] || page.Str("reports.edges.2.node.comment.content") != "bad comment" ||
		page.Get("reports.pageInfo.hasNextPage") != true {
		t.Fatalf("first page: %+v", page.Data)
	}
	next := s.MustDo(t, s.mod.Token, reportsDoc, map[string]any{"first": 3, "after": page.Str("reports.pageInfo.endCursor")})
	if next.Str("reports.edges.0.node.user.name") != author.Name || next.Get("reports.pageInfo.hasNextPage") != false {
		t.Fatalf("second page: %+v", next.Data)
	}

	for _, who := range []gatewaytest.User{reader, author} {
		s.Do(t, who.Token, reportsDoc, nil).WantCode(t, "FORBIDDEN")
		s.resolve(t, who.Token, ids["dismiss"], "DISMISS").WantCode(t, "FORBIDDEN")
	}
	s.Do(t, "", reportsDoc, nil).WantCode(t, "UNAUTHENTICATED")

	cases := []struct {
		name, id, action, code string
		check                  func(t *testing.T)
	}{
		{"dismiss", ids["dismiss"], "DISMISS", "", func(t *testing.T) {
			if s.MustDo(t, reader.Token, `query($p: ID!) { post(id: $p) { id } }`, map[string]any{"p": dismissed}).Str("post.id") != dismissed {
				t.Error("a dismissed report's post is gone")
			}
		}},
		{"remove a user", ids["user"], "REMOVE_CONTENT", "BAD_USER_INPUT", nil},
		{"remove a post", ids["post"], "REMOVE_CONTENT", "", func(t *testing.T) {
			if p := s.MustDo(t, reader.Token, `query($p: ID!) { post(id: $p) { id } }`, map[string]any{"p": removed}).Get("post"); p != nil {
				t.Errorf("removed post still there: %v", p)
			}
		}},
		{"remove a comment", ids["comment"], "REMOVE_CONTENT", "", func(t *testing.T) {
			if c := s.MustDo(t, reader.Token, `query($c: ID!) { comment(id: $c) { id } }`, map[string]any{"c": comment}).Get("comment"); c != nil {
				t.Errorf("removed comment still there: %v", c)
			}
		}},
		{"resolve again", ids["dismiss"], "SUSPEND_USER", "CONFLICT", nil},
		{"an unknown report", "999999", "DISMISS", "NOT_FOUND", nil},
		{"suspend", ids["user"], "SUSPEND_USER", "", func(t *testing.T) {
			s.Do(t, author.Token, `{ me { id } }`, nil).WantCode(t, "UNAUTHENTICATED")
			s.Do(t, "", authLoginDoc, map[string]any{"i": map[string]any{"login": author.Name, "password": gatewaytest.Password}}).WantCode(t, "FORBIDDEN")
			s.Do(t, "", `mutation($r: String!) { refreshToken(refreshToken: $r) { accessToken } }`, map[string]any{"r": author.Refresh}).WantCode(t, "UNAUTHENTICATED")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := s.resolve(t, s.mod.Token, c.id, c.action)
			if c.code != "" {
				r.WantCode(t, c.code)
				return
			}
			if len(r.Errors) > 0 || r.Str("resolveReport.status") != "RESOLVED" || r.Str("resolveReport.action") != c.action {
				t.Fatalf("%+v %+v", r.Data, r.Errors)
			}
			c.check(t)
		})
	}
	resolved := s.MustDo(t, s.mod.Token, reportsDoc, map[string]any{"s": "RESOLVED"})
	if n := len(resolved.Get("reports.edges").([]any)); n != 4 {
		t.Errorf("%d resolved reports, want 4: %+v", n, resolved.Data)
	}
	if open := s.MustDo(t, s.mod.Token, reportsDoc, nil); len(open.Get("reports.edges").([]any)) != 0 {
		t.Errorf("open reports left: %+v", open.Data)
	}

	// One line per action, naming the moderator, the action and the target.
	lines := s.log.lines(t, "moderation")
	if len(lines) != 4 {
		t.Fatalf("%d moderation log lines, want 4: %v", len(lines), lines)
	}
	want := []struct{ action, target string }{{"DISMISS", dismissed}, {"REMOVE_CONTENT", removed}, {"REMOVE_CONTENT", comment}, {"SUSPEND_USER", author.ID}}
	for i, l := range lines {
		if l["moderator"] != s.mod.Name || l["action"] != want[i].action || l["target"] != want[i].target || l["level"] != "INFO" {
			t.Errorf("log line %d: %v, want moderator %s action %s target %s", i, l, s.mod.Name, want[i].action, want[i].target)
		}
	}
}

// suspendedViews is every read that shows what an author made, as viewer
// sees it: each returns whether it shows any of it.
func suspendedViews(s *gatewaytest.Server, viewer, author gatewaytest.User, post, tag, commentedPost string) map[string]func(t *testing.T) bool {
	has := func(t *testing.T, doc string, vars map[string]any, needle string) bool {
		t.Helper()
		r := s.MustDo(t, viewer.Token, doc, vars)
		b, _ := json.Marshal(r.Data)
		return strings.Contains(string(b), needle)
	}
	return map[string]func(t *testing.T) bool{
		"home timeline": func(t *testing.T) bool {
			return has(t, `{ timeline { edges { node { id } } } }`, nil, `"`+post+`"`)
		},
		"user timeline": func(t *testing.T) bool {
			return has(t, `query($u: ID!) { userTimeline(userId: $u) { edges { node { id } } } }`, map[string]any{"u": author.ID}, `"`+post+`"`)
		},
		"user page": func(t *testing.T) bool {
			return has(t, `query($n: String!) { user(name: $n) { id posts { edges { node { id } } } } }`, map[string]any{"n": author.Name}, `"user":{"id":"`+author.ID+`"`)
		},
		"tag page": func(t *testing.T) bool {
			return has(t, `query($t: String!) { tagTimeline(tag: $t) { edges { node { id } } } }`, map[string]any{"t": tag}, `"`+post+`"`)
		},
		"post": func(t *testing.T) bool {
			return has(t, `query($p: ID!) { post(id: $p) { id } }`, map[string]any{"p": post}, `"`+post+`"`)
		},
		"comments": func(t *testing.T) bool {
			return has(t, `query($p: ID!) { post(id: $p) { comments { edges { node { id author { id } } } } } }`,
				map[string]any{"p": commentedPost}, `"author":{"id":"`+author.ID+`"}`)
		},
		"comments without authors": func(t *testing.T) bool {
			return has(t, `query($p: ID!) { post(id: $p) { comments { edges { node { content } } } } }`,
				map[string]any{"p": commentedPost}, "a comment by the author")
		},
		"comments on a timeline page": func(t *testing.T) bool {
			return has(t, `{ timeline { edges { node { id comments(first: 3) { edges { node { author { id } } } } } } } }`, nil,
				`"author":{"id":"`+author.ID+`"}`)
		},
		"notifications": func(t *testing.T) bool {
			return has(t, `{ notifications { edges { node { actors { id } } } } }`, nil, `{"id":"`+author.ID+`"}`)
		},
		// The actors not asked for: the page still leaves out what
		// only the suspended account raised (its follow, its comment).
		"notifications without actors": func(t *testing.T) bool {
			return has(t, `{ notifications { edges { node { kind actorsCount } } } }`, nil, `"FOLLOW"`)
		},
		"search": func(t *testing.T) bool {
			return has(t, `query($p: String!) { searchUsers(prefix: $p) { id } }`, map[string]any{"p": author.Name}, `{"id":"`+author.ID+`"}`)
		},
		"follower list": func(t *testing.T) bool {
			return has(t, `query($u: ID!) { user(id: $u) { followers { edges { node { id } } } } }`, map[string]any{"u": viewer.ID}, `{"id":"`+author.ID+`"}`)
		},
	}
}

func TestSuspensionHidesUntilLifted(t *testing.T) {
	s := newModServer(t, gatewaytest.Options{})
	author, viewer := s.Register(t, "author"), s.Register(t, "viewer")
	mustSocial(t, s.Server, viewer.Token, "follow", author.ID)
	mustSocial(t, s.Server, author.Token, "follow", viewer.ID)
	tag := "modtag"
	post := engNewPost(t, s.Server, author, map[string]any{"content": "suspect #" + tag})
	viewerPost := engNewPost(t, s.Server, viewer, map[string]any{"content": "viewer's"})
	s.comment(t, author, viewerPost, "a comment by the author")
	s.w.Drain(t)
	// A second gateway on the same Redis reads what the first suspended.
	other := gatewaytest.Share(t, s.Server)
	views := suspendedViews(other, viewer, author, post, tag, viewerPost)
	for name, shows := range views {
		if !shows(t) {
			t.Fatalf("%s does not show the author's content before the suspension", name)
		}
	}
	rid := s.report(t, viewer.Token, map[string]any{"userId": author.ID}).Str("report.id")
	if r := s.resolve(t, s.mod.Token, rid, "SUSPEND_USER"); len(r.Errors) > 0 {
		t.Fatal(r.Errors)
	}
	for name, shows := range views {
		t.Run("suspended/"+name, func(t *testing.T) {
			if shows(t) {
				t.Errorf("%s shows a suspended author's content", name)
			}
		})
	}
	// The moderator still sees the reported account in the queue.
	q := s.MustDo(t, s.mod.Token, reportsDoc, map[string]any{"s": "RESOLVED"})
	if q.Str("reports.edges.0.node.user.id") != author.ID {
		t.Errorf("the queue lost the suspended user: %+v", q.Data)
	}

	u, err := gateway.NewModeration(s.Store, nil, gateway.ModerationConfig{Log: slog.New(slog.NewJSONHandler(s.log, nil))}).
		Unsuspend(context.Background(), "ops", author.Name)
	if err != nil || u.ID != author.ID {
		t.Fatalf("unsuspend: %v %v", u, err)
	}
	for name, shows := range views {
		t.Run("lifted/"+name, func(t *testing.T) {
			if !shows(t) {
				t.Errorf("%s still hides the author's content after the suspension was lifted", name)
			}
		})
	}
	login := s.Do(t, "", authLoginDoc, map[string]any{"i": map[string]any{"login": author.Name, "password": gatewaytest.Password}})
	if len(login.Errors) > 0 {
		t.Errorf("login after unsuspend: %+v", login.Errors)
	}
	lines := s.log.lines(t, "moderation")
	if l := lines[len(lines)-1]; l["action"] != "UNSUSPEND" || l["moderator"] != "ops" || l["target"] != author.ID {
		t.Errorf("unsuspend log line: %v", l)
	}
}
