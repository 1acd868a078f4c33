package graph_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"maps"
	"mime/multipart"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/gateway"
	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/ratelimit"
	"github.com/socialgw/gateway/internal/redisstore"
)

// The account e-mail mutations of the bad-input table.
const (
	changePasswordDoc = `mutation($c: String!, $n: String!) { changePassword(currentPassword: $c, newPassword: $n) { accessToken } }`
	changeEmailDoc    = `mutation($e: String!, $p: String!) { changeEmail(newEmail: $e, password: $p) }`
)

// badRequest is one raw request of the bad-input table.
type badRequest struct {
	method, path string
	header       map[string]string
	body         string
}

func jsonBody(doc string, vars map[string]any) string {
	b, _ := json.Marshal(map[string]any{"query": doc, "variables": vars})
	return string(b)
}

// gql is a JSON GraphQL POST.
func gql(token, doc string, vars map[string]any) badRequest {
	h := map[string]string{"Content-Type": jsonType}
	if token != "" {
		h["Authorization"] = "Bearer " + token
	}
	return badRequest{method: "POST", path: "/query", header: h, body: jsonBody(doc, vars)}
}

// TestBadInput sends every kind of bad input the gateway refuses: each gets
// its exact status and code, leaves every key of the store's prefix as it
// was (a DUMP of each, compared before and after), and the server serves
// the next request.
func TestBadInput(t *testing.T) {
	s := gatewaytest.New(t, gatewaytest.Options{Abuse: &gateway.Abuse{
		RateLimits: map[string]ratelimit.Limit{auth.RuleLoginAccount: {Count: 3, Per: time.Hour}},
		APQ:        redisstore.DefaultAPQ(),
	}})
	ctx := context.Background()
	author, blocked, ghost := s.Register(t, "author"), s.Register(t, "blocked"), s.Register(t, "ghost")
	post := s.MustDo(t, author.Token, engCreatePostDoc, map[string]any{"i": map[string]any{"content": "hello"}}).Str("createPost.id")
	s.MustDo(t, author.Token, `mutation($u: ID!) { block(userId: $u) { id } }`, map[string]any{"u": blocked.ID})
	reader := s.Register(t, "reader")
	other := s.MustDo(t, author.Token, engCreatePostDoc, map[string]any{"i": map[string]any{"content": "another"}}).Str("createPost.id")
	comment := s.MustDo(t, reader.Token, addCommentDoc, map[string]any{"p": post, "c": "first"}).Str("addComment.id")
	const editDoc = `mutation($p: ID!, $c: String!) { editPost(id: $p, input: {content: $c}) { id } }`
	const replyDoc = `mutation($p: ID!, $r: ID!) { addComment(postId: $p, content: "answer", inReplyTo: $r) { id } }`
	const filterDoc = `mutation($i: FilterInput!) { addFilter(input: $i) { id } }`
	filter := s.MustDo(t, author.Token, filterDoc, map[string]any{"i": map[string]any{"phrase": "spoilers", "context": []string{"HOME"}}}).Str("addFilter.id")
	addFilter := func(i map[string]any) badRequest { return gql(reader.Token, filterDoc, map[string]any{"i": i}) }
	s.MustDo(t, blocked.Token, `mutation { register: updateProfile(input: {bio: "x"}) { id } }`, nil)
	s.MustDo(t, "", authRegisterDoc, registerVars("alice_fw", "alice.fw@example.com", "password123"))
	// A user lost with the data: the token outlives it.
	if err := s.Redis.Del(ctx, s.Store.Keys().User(ghost.ID)).Err(); err != nil {
		t.Fatal(err)
	}
	// A mutation registered as a persisted query (it fails, anonymous,
	// but the cache keeps the document), then asked for over GET.
	const logout = `mutation { logout }`
	sum := sha256.Sum256([]byte(logout))
	apq := `{"persistedQuery":{"version":1,"sha256Hash":"` + hex.EncodeToString(sum[:]) + `"}}`
	s.Do(t, "", logout, nil)
	if st, _, b := s.Raw(t, "POST", "/query", map[string]string{"Content-Type": jsonType},
		strings.NewReader(`{"query":`+quote(logout)+`,"extensions":`+apq+`}`)); st != 200 || !strings.Contains(string(b), "UNAUTHENTICATED") {
		t.Fatalf("register persisted mutation: %d %s", st, b)
	}
	// Spend the login budget of an account (3 per hour).
	for range 3 {
		s.Do(t, "", authLoginDoc, loginVars(author.Name, "wrong password"))
	}

	post1 := func(content string) badRequest {
		return gql(author.Token, engCreatePostDoc, map[string]any{"i": map[string]any{"content": content}})
	}
	// A post whose content is written as JSON escapes, as sent.
	postEscaped := func(escaped string) badRequest {
		r := gql(author.Token, engCreatePostDoc, nil)
		r.body = `{"query":` + quote(engCreatePostDoc) + `,"variables":{"i":{"content":"` + escaped + `"}}}`
		return r
	}
	ws := map[string]string{"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
		"Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Protocol": "graphql-transport-ws"}
	withOrigin := maps.Clone(ws)
	withOrigin["Origin"] = "https://evil.example"
	noKey := maps.Clone(ws)
	delete(noKey, "Sec-WebSocket-Key")
	tests := []struct {
		name   string
		req    badRequest
		status int
		code   string
	}{
		// Text that looks empty, and bidi controls.
		{"empty tag", gql(author.Token, `{ tagTimeline(tag: "#") { edges { cursor } } }`, nil), 200, "BAD_USER_INPUT"},
		{"overlong tag", gql("", `query($t: String!) { tagTimeline(tag: $t) { edges { cursor } } }`, map[string]any{"t": strings.Repeat("x", 101)}), 200, "BAD_USER_INPUT"},
		{"tag with a space", gql("", `{ tagTimeline(tag: "two words") { edges { cursor } } }`, nil), 200, "BAD_USER_INPUT"},
		{"empty search prefix", gql(author.Token, `{ searchUsers(prefix: " @ ") { id } }`, nil), 200, "BAD_USER_INPUT"},
		{"overlong search prefix", gql("", `query($p: String!) { searchUsers(prefix: $p) { id } }`, map[string]any{"p": strings.Repeat("a", 51)}), 200, "BAD_USER_INPUT"},
		{"trends first 0", gql("", `{ trendingTags(first: 0) { tag } }`, nil), 200, "BAD_USER_INPUT"},
		{"post of Hangul fillers", post1("\u3164\u3164\u3164"), 200, "BAD_USER_INPUT"},
		{"post of blank braille", post1("\u2800\u2800"), 200, "BAD_USER_INPUT"},
		{"post of soft hyphens", post1("\u00ad \u00ad"), 200, "BAD_USER_INPUT"},
		{"post of tag characters", post1("\U000e0068\U000e0069\U000e007f"), 200, "BAD_USER_INPUT"},
		{"post of variation selectors and zero-width", post1("\ufe0f\u200b\U000e0100\u2060"), 200, "BAD_USER_INPUT"},
		{"post of white space", post1(" \n\t "), 200, "BAD_USER_INPUT"},
		{"post with a right-to-left override", post1("invoice_\u202efdp.exe"), 200, "BAD_USER_INPUT"},
		{"post with an isolate", post1("a\u2067b"), 200, "BAD_USER_INPUT"},
		{"post with a control character", post1("a\x1b[2Jb"), 200, "BAD_USER_INPUT"},
		{"comment of invisible characters", gql(author.Token, addCommentDoc, map[string]any{"p": post, "c": "\u3164\u200d"}), 200, "BAD_USER_INPUT"},
		{"bio with an override", gql(author.Token, `mutation($b: String) { updateProfile(input: {bio: $b}) { id } }`, map[string]any{"b": "\u202ehi"}), 200, "BAD_USER_INPUT"},
		{"changePassword with a wrong password", gql(author.Token, changePasswordDoc, map[string]any{"c": "wrong password", "n": "a new password"}), 200, "BAD_USER_INPUT"},
		{"deleteAccount with a wrong password", gql(author.Token, `mutation($p: String!) { deleteAccount(password: $p) }`, map[string]any{"p": "wrong password"}), 200, "BAD_USER_INPUT"},
		{"deleteAccount with an over-long password", gql(author.Token, `mutation($p: String!) { deleteAccount(password: $p) }`, map[string]any{"p": strings.Repeat("x", 5000)}), 200, "BAD_USER_INPUT"},
		{"changePassword to a short password", gql(author.Token, changePasswordDoc, map[string]any{"c": gatewaytest.Password, "n": "short"}), 200, "BAD_USER_INPUT"},
		{"resetPassword with a forged token", gql("", `mutation($t: String!) { resetPassword(token: $t, newPassword: "a new password") { accessToken } }`,
			map[string]any{"t": "r" + author.ID + "." + strings.Repeat("A", 43)}), 200, "BAD_USER_INPUT"},
		{"verifyEmail with a forged token", gql("", `mutation($t: String!) { verifyEmail(token: $t) { id } }`,
			map[string]any{"t": "v" + author.ID + "." + strings.Repeat("A", 43)}), 200, "BAD_USER_INPUT"},
		{"changeEmail to a taken address", gql(author.Token, changeEmailDoc, map[string]any{"e": "Alice.FW@example.com", "p": gatewaytest.Password}), 200, "CONFLICT"},
		{"changeEmail with a wrong password", gql(author.Token, changeEmailDoc, map[string]any{"e": "new.author@example.com", "p": "wrong password"}), 200, "BAD_USER_INPUT"},
		{"requestPasswordReset of a malformed address", gql("", `mutation { requestPasswordReset(email: "not an address") }`, nil), 200, "BAD_USER_INPUT"},
		{"display name with an override", gql(author.Token, `mutation($d: String) { updateProfile(input: {displayName: $d, bio: "kept out"}) { id } }`, map[string]any{"d": "\u202egnp.exe"}), 200, "BAD_USER_INPUT"},
		{"display name on two lines", gql(author.Token, `mutation($d: String) { updateProfile(input: {displayName: $d}) { id } }`, map[string]any{"d": "a\nb"}), 200, "BAD_USER_INPUT"},
		{"display name too long", gql(author.Token, `mutation($d: String) { updateProfile(input: {displayName: $d}) { id } }`, map[string]any{"d": strings.Repeat("n", 51)}), 200, "BAD_USER_INPUT"},
		{"filter of an empty phrase", addFilter(map[string]any{"phrase": " \u200b ", "context": []string{"HOME"}}), 200, "BAD_USER_INPUT"},
		{"filter of an overlong phrase", addFilter(map[string]any{"phrase": strings.Repeat("é", 101), "context": []string{"HOME"}}), 200, "BAD_USER_INPUT"},
		{"filter of two lines", addFilter(map[string]any{"phrase": "a\nb", "context": []string{"HOME"}}), 200, "BAD_USER_INPUT"},
		{"filter without a context", addFilter(map[string]any{"phrase": "x", "context": []string{}}), 200, "BAD_USER_INPUT"},
		{"filter expiring in the past", addFilter(map[string]any{"phrase": "x", "context": []string{"HOME"}, "expiresIn": -1}), 200, "BAD_USER_INPUT"},
		{"filter expiring now", addFilter(map[string]any{"phrase": "x", "context": []string{"HOME"}, "expiresIn": 0}), 200, "BAD_USER_INPUT"},
		{"remove another user's filter", gql(reader.Token, `mutation($f: ID!) { removeFilter(id: $f) }`, map[string]any{"f": filter}), 200, "NOT_FOUND"},
		{"remove an unknown filter", gql(reader.Token, `mutation { removeFilter(id: "99999") }`, nil), 200, "NOT_FOUND"},
		{"remove yourself as a follower", gql(author.Token, `mutation($u: ID!) { removeFollower(userId: $u) { id } }`, map[string]any{"u": author.ID}), 200, "BAD_USER_INPUT"},
		{"remove an unknown follower", gql(author.Token, `mutation { removeFollower(userId: "999999") { id } }`, nil), 200, "NOT_FOUND"},
		{"approve a request never made", gql(author.Token, `mutation($u: ID!) { approveFollowRequest(userId: $u) { id } }`, map[string]any{"u": author.ID}), 200, "NOT_FOUND"},
		{"reject an unknown user's request", gql(author.Token, `mutation { rejectFollowRequest(userId: "999999") { id } }`, nil), 200, "NOT_FOUND"},
		{"approve a malformed id", gql(author.Token, `mutation { approveFollowRequest(userId: "abc") { id } }`, nil), 200, "NOT_FOUND"},
		{"follow requests anonymous", gql("", `{ followRequests { totalCount } }`, nil), 200, "UNAUTHENTICATED"},
		{"follow requests first 0", gql(author.Token, `{ followRequests(first: 0) { totalCount } }`, nil), 200, "BAD_USER_INPUT"},
		// Bytes that are not UTF-8.
		{"invalid UTF-8 in a body", badRequest{"POST", "/query", map[string]string{"Content-Type": jsonType},
			`{"query":"mutation { createPost(input: {content: \"caf` + "\xe9" + `\"}) { id } }"}`}, 400, "BAD_USER_INPUT"},
		{"invalid UTF-8 in a GET query", badRequest{"GET", "/query?query=" + url.QueryEscape("{ user(name: \"\xff\") { id } }"), nil, ""}, 400, "BAD_USER_INPUT"},
		// Halves of UTF-16 surrogate pairs, which JSON decoding would
		// silently turn into U+FFFD.
		{"post with a lone high surrogate escape", postEscaped(`a\ud800b`), 400, "BAD_USER_INPUT"},
		{"post with a lone low surrogate escape", postEscaped(`\udc00`), 400, "BAD_USER_INPUT"},
		{"post with a high surrogate before another escape", postEscaped(`\ud83d\u0041`), 400, "BAD_USER_INPUT"},
		{"GET variables with a lone surrogate", badRequest{"GET", "/query?query=" + url.QueryEscape("query($n: String!) { user(name: $n) { id } }") +
			"&variables=" + url.QueryEscape(`{"n":"\ud800"}`), nil, ""}, 400, "BAD_USER_INPUT"},
		// Transport misuse.
		{"GET variables that are not JSON", badRequest{"GET", "/query?query=" + url.QueryEscape("{ me { id } }") + "&variables=%7Bnope", nil, ""}, 400, "BAD_USER_INPUT"},
		{"GET extensions that are not JSON", badRequest{"GET", "/query?query=" + url.QueryEscape("{ me { id } }") + "&extensions=[1", nil, ""}, 400, "BAD_USER_INPUT"},
		{"mutation over GET", badRequest{"GET", "/query?query=" + url.QueryEscape(logout), nil, ""}, 405, "BAD_USER_INPUT"},
		{"persisted-query mutation over GET", badRequest{"GET", "/query?extensions=" + url.QueryEscape(apq), nil, ""}, 405, "BAD_USER_INPUT"},
		{"stray Upgrade header", badRequest{"POST", "/query", map[string]string{"Content-Type": jsonType, "Upgrade": "h2c", "Connection": "Upgrade"},
			`{"query":"{ __typename }"}`}, 400, "BAD_USER_INPUT"},
		{"websocket upgrade by POST", badRequest{"POST", "/query", ws, ""}, 400, "BAD_USER_INPUT"},
		{"websocket upgrade without a key", badRequest{"GET", "/query", noKey, ""}, 400, "BAD_USER_INPUT"},
		{"variables over 64 KiB", gql(author.Token, engCreatePostDoc, map[string]any{"i": map[string]any{"content": "x"}, "pad": strings.Repeat("y", 70<<10)}), 400, "BAD_USER_INPUT"},
		{"variables of 6000 values", gql(author.Token, engCreatePostDoc, map[string]any{"i": map[string]any{"content": "x", "onlyTo": make([]int, 6000)}}), 400, "BAD_USER_INPUT"},
		{"GET variables of 6000 values", badRequest{"GET", "/query?query=" + url.QueryEscape("{ me { id } }") + "&variables=" + url.QueryEscape("{\"a\":["+strings.Repeat("1,", 5999)+"1]}"), map[string]string{}, ""}, 400, "BAD_USER_INPUT"},
		{"a member named twice", badRequest{"POST", "/query", map[string]string{"Content-Type": jsonType, "Authorization": "Bearer " + author.Token},
			`{"query":"{ me { id } }","query":"mutation { logout }"}`}, 400, "BAD_USER_INPUT"},
		{"a member named twice in two cases", badRequest{"POST", "/query", map[string]string{"Content-Type": jsonType, "Authorization": "Bearer " + author.Token},
			`{"query":"{ me { id } }","QUERY":"mutation { logout }"}`}, 400, "BAD_USER_INPUT"},
		{"variables over 64 KiB under another spelling", badRequest{"POST", "/query", map[string]string{"Content-Type": jsonType, "Authorization": "Bearer " + author.Token},
			`{"query":"{ me { id } }","Variable\u017f":{"pad":"` + strings.Repeat("y", 70<<10) + `"}}`}, 400, "BAD_USER_INPUT"},
		{"websocket from a foreign origin", badRequest{"GET", "/query", withOrigin, ""}, 403, "FORBIDDEN"},
		{"PUT", badRequest{"PUT", "/query", map[string]string{"Content-Type": jsonType}, `{"query":"{ __typename }"}`}, 405, "BAD_USER_INPUT"},
		{"form body", badRequest{"POST", "/query", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, "query=%7B__typename%7D"}, 415, "BAD_USER_INPUT"},
		{"body that is not an object", badRequest{"POST", "/query", map[string]string{"Content-Type": jsonType}, `["{ __typename }"]`}, 400, "BAD_USER_INPUT"},
		{"a URL query string that does not parse", badRequest{"GET", "/query?query=%7B__typename%7D&x=%zz", nil, ""}, 400, "BAD_USER_INPUT"},
		{"a URL query string with a semicolon", badRequest{"GET", "/query?query=%7B__typename%7D;x=1", nil, ""}, 400, "BAD_USER_INPUT"},
		{"a variable no float64 holds", badRequest{"POST", "/query", map[string]string{"Content-Type": jsonType},
			`{"query":"query($n: Int) { timeline(first: $n) { pageInfo { hasNextPage } } }","variables":{"n":1e400}}`}, 400, "BAD_USER_INPUT"},
		{"an extension no float64 holds", badRequest{"POST", "/query", map[string]string{"Content-Type": jsonType},
			`{"query":"{ __typename }","extensions":{"x":[{"y":-1e400}]}}`}, 400, "BAD_USER_INPUT"},
		// Accounts and sessions.
		{"e-mail twin in full-width letters", gql("", authRegisterDoc, registerVars("alice_fw2", "\uff41lice.fw@example.com", "password123")), 200, "CONFLICT"},
		{"login over the account's budget", gql("", authLoginDoc, loginVars(author.Name, gatewaytest.Password)), 200, "RATE_LIMITED"},
		{"token of a user who no longer exists", gql(ghost.Token, engCreatePostDoc, map[string]any{"i": map[string]any{"content": "orphan"}}), 401, "UNAUTHENTICATED"},
		{"malformed Authorization", badRequest{"POST", "/query", map[string]string{"Content-Type": jsonType, "Authorization": "Basic abc"}, `{"query":"{ me { id } }"}`}, 401, "UNAUTHENTICATED"},
		// Posts hidden by a block.
		{"like a post hidden by a block", gql(blocked.Token, likeDoc, map[string]any{"p": post}), 200, "NOT_FOUND"},
		{"comment on a post hidden by a block", gql(blocked.Token, addCommentDoc, map[string]any{"p": post, "c": "hi"}), 200, "NOT_FOUND"},
		{"repost of a post hidden by a block", gql(blocked.Token, engCreatePostDoc, map[string]any{"i": map[string]any{"content": "x", "repostOf": post}}), 200, "NOT_FOUND"},
		// Edits and answers.
		{"edit another user's post", gql(reader.Token, editDoc, map[string]any{"p": post, "c": "mine"}), 200, "FORBIDDEN"},
		{"edit to empty content", gql(author.Token, editDoc, map[string]any{"p": post, "c": " "}), 200, "BAD_USER_INPUT"},
		{"edit a post hidden by a block", gql(blocked.Token, editDoc, map[string]any{"p": post, "c": "x"}), 200, "NOT_FOUND"},
		{"answer a comment of another post", gql(reader.Token, replyDoc, map[string]any{"p": other, "r": comment}), 200, "BAD_USER_INPUT"},
		{"answer a comment that does not exist", gql(reader.Token, replyDoc, map[string]any{"p": post, "r": "999999"}), 200, "NOT_FOUND"},
		// Values gqlgen cannot coerce into an argument's type.
		{"post media file sent as a string", gql(author.Token, engCreatePostDoc, map[string]any{"i": map[string]any{"content": "x", "media": []any{map[string]any{"file": "not a file"}}}}), 200, "BAD_USER_INPUT"},
		{"post media file as a string literal", gql(author.Token, `mutation { createPost(input: {content: "x", media: [{file: "not a file"}]}) { id } }`, nil), 200, "BAD_USER_INPUT"},
		{"avatar sent as a string", gql(author.Token, avatarDoc, map[string]any{"f": "not a file"}), 200, "BAD_USER_INPUT"},
		{"avatar sent as a number", gql(author.Token, avatarDoc, map[string]any{"f": 7}), 200, "BAD_USER_INPUT"},
		{"avatar as a string over multipart", multipartRequest(t, author.Token, avatarDoc, `{"f":"not a file"}`), 200, "BAD_USER_INPUT"},
		// Paging.
		{"first over 100", gql(author.Token, `{ timeline(first: 101) { pageInfo { hasNextPage } } }`, nil), 200, "BAD_USER_INPUT"},
		{"first of 0", gql(author.Token, `{ timeline(first: 0) { pageInfo { hasNextPage } } }`, nil), 200, "BAD_USER_INPUT"},
		{"malformed cursor", gql(author.Token, `{ timeline(after: "djE6\u0000") { pageInfo { hasNextPage } } }`, nil), 200, "BAD_USER_INPUT"},
	}
	prefix := s.Store.Keys().Prefix()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := gatewaytest.RedisSnapshot(t, s.Redis, prefix)
			var body io.Reader
			if tt.req.body != "" {
				body = strings.NewReader(tt.req.body)
			}
			status, _, b := s.Raw(t, tt.req.method, tt.req.path, tt.req.header, body)
			r := gatewaytest.Decode(t, status, b)
			if status != tt.status || r.Code() != tt.code {
				t.Errorf("status %d, code %q; want %d, %s\n%s", status, r.Code(), tt.status, tt.code, b)
			}
			for i, e := range r.Errors {
				if e.Extensions["code"] == nil {
					t.Errorf("error %d has no extensions.code: %s", i, b)
				}
			}
			if tt.code == "RATE_LIMITED" && (r.Errors[0].Extensions["retryAfter"] == nil) {
				t.Errorf("RATE_LIMITED without retryAfter: %s", b)
			}
			if diff := gatewaytest.DiffSnapshots(before, gatewaytest.RedisSnapshot(t, s.Redis, prefix)); len(diff) > 0 {
				t.Errorf("Redis changed: %v", diff)
			}
			if me := s.Do(t, author.Token, authMeDoc, nil); me.Str("me.id") != author.ID {
				t.Errorf("the server stopped serving: %+v", me)
			}
		})
	}
}

// avatarDoc sets the avatar from the variable $f.
const avatarDoc = `mutation($f: Upload) { updateProfile(input: {avatar: $f}) { id } }`

// multipartRequest is a multipart GraphQL request (the upload transport)
// of doc and its variables, with no file.
func multipartRequest(t *testing.T, token, doc, vars string) badRequest {
	t.Helper()
	var b strings.Builder
	mw := multipart.NewWriter(&b)
	if err := mw.WriteField("operations", `{"query":`+quote(doc)+`,"variables":`+vars+`}`); err != nil {
		t.Fatal(err)
	}
	if err := mw.WriteField("map", `{}`); err != nil {
		t.Fatal(err)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	h := map[string]string{"Content-Type": mw.FormDataContentType(), "GraphQL-Require-Preflight": "1", "Authorization": "Bearer " + token}
	return badRequest{method: "POST", path: "/query", header: h, body: b.String()}
}
