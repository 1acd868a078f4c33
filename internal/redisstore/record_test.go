package redisstore

import (
	"io/fs"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/social"
)

// TestRecordTablesCheck: the store's tables pass check, and a table with
// a field that has no codec, no mutability, a bad name or a twin fails it.
func TestRecordTablesCheck(t *testing.T) {
	for _, r := range []interface{ check() error }{postRecord, profileRecord, commentRecord, noteRecord} {
		if err := r.check(); err != nil {
			t.Error(err)
		}
	}
	good := text(func(r *userRow) *string { return &r.user.Name })
	for _, tc := range []struct {
		name string
		f    field[userRow]
	}{
		{"no codec", field[userRow]{name: "x", change: fixed}},
		{"no decoder", field[userRow]{"x", fixed, codec[userRow]{get: good.get}}},
		{"no encoder", field[userRow]{"x", mutable, codec[userRow]{set: good.set}}},
		{"no mutability", field[userRow]{name: "x", codec: good}},
		{"a name Lua cannot use", field[userRow]{"x-y", fixed, good}},
		{"twice", field[userRow]{"name", mutable, good}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &record[userRow]{lua: "test", fields: []field[userRow]{{"name", fixed, good}, tc.f}}
			if err := r.check(); err == nil {
				t.Errorf("check passed a table with a field %s: %+v", tc.name, tc.f)
			}
		})
	}
}

// TestPostCacheKeepsFixedFieldsOnly: the post cache keeps fixed fields
// only and reads every mutable one; a plan that keeps a mutable field, or
// proves identity with one, fails; a field made mutable in the table is
// read at once instead of kept.
func TestPostCacheKeepsFixedFieldsOnly(t *testing.T) {
	if err := checkPlan(postRecord, postCachePlan); err != nil {
		t.Fatal(err)
	}
	content := postRecord.at("content")
	bad := postCachePlan
	bad.keep = append(slices.Clone(bad.keep), postRecord.at("nlikes"))
	if err := checkPlan(postRecord, bad); err == nil {
		t.Error("a plan keeping nlikes, a mutable field, passed")
	}
	bad = postCachePlan
	bad.livePos = slices.DeleteFunc(slices.Clone(bad.livePos), func(i int) bool { return i == postRecord.at("cm") })
	if err := checkPlan(postRecord, bad); err == nil {
		t.Error("a plan that does not read cm, a mutable field, passed")
	}

	// content made mutable (an edit writes it).
	fields := slices.Clone(postRecord.fields)
	fields[content].change = mutable
	edited := newRecord("post", fields...)
	plan := newCachePlan(edited, "edited", "author", "created")
	if slices.Contains(plan.keep, content) || !slices.Contains(plan.livePos, content) {
		t.Errorf("content made mutable: kept at %v, read at %v", plan.keep, plan.livePos)
	}
	fields[postRecord.at("created")].change = mutable
	if err := checkPlan(newRecord("post", fields...), plan); err == nil {
		t.Error("a plan proving identity with a mutable field passed")
	}
}

// reply is the HMGET reply of names from a hash holding fv (field/value
// pairs).
func reply(fv []any, names []any) []any {
	h := map[any]any{}
	for i := 0; i+1 < len(fv); i += 2 {
		h[fv[i]] = fv[i+1]
	}
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = h[n]
	}
	return out
}

// roundTrip writes row as its record's writers do and reads it back as
// an HMGET of the whole record.
func roundTrip[T any](r *record[T], row T) T {
	var got T
	r.decode(&got, reply(r.encode(&row), r.all))
	return got
}

// TestRecordRoundTrips: what a writer sets of a record decodes to the
// same record.
func TestRecordRoundTrips(t *testing.T) {
	at := time.UnixMilli(1_700_000_000_123).UTC()
	cw, edited := "a warning", at.Add(time.Hour)
	posts := map[string]postRow{
		"plain":   {post: social.Post{AuthorID: "1", Content: "hi", CreatedAt: at, Visibility: social.Public}, viewers: true},
		"counted": {post: social.Post{AuthorID: "1", Content: "hi", CreatedAt: at, Visibility: social.OnlyTo}, counts: social.PostCounts{Likes: 3, Comments: 2, Reposts: 1}},
		"repost":  {post: social.Post{AuthorID: "2", CreatedAt: at, Visibility: social.NotTo, RepostOfID: "9", RepostOfAuthorID: "1"}, viewers: true},
		"extras": {post: social.Post{AuthorID: "1", Content: "@a @b", CreatedAt: at, Visibility: social.Public, Source: "web",
			Location: &social.Location{Latitude: 45.76, Longitude: -4.5, Name: "Lyon"}, Mentions: []string{"3", "4"},
			Media:       []social.Media{{ID: "a1", Kind: social.Image, MIME: "image/png", Bytes: 10, Width: 2, Height: 3, Alt: "a cat", Key: "media/a1"}},
			SpoilerText: &cw, Sensitive: true, EditedAt: &edited}},
		"nameless place": {post: social.Post{AuthorID: "1", Content: "x", CreatedAt: at, Visibility: social.Public, Location: &social.Location{Latitude: 1, Longitude: 2}}},
	}
	for name, row := range posts {
		t.Run("post "+name, func(t *testing.T) {
			if got := roundTrip(postRecord, row); !reflect.DeepEqual(got, row) {
				t.Errorf("read back %+v\nwrote     %+v", got, row)
			}
		})
	}
	avatar := &social.ProfileImage{ID: "p1", Original: social.ImageFile{MIME: "image/png", Bytes: 9, Width: 5, Height: 4, Key: "profile/1/p1/orig"},
		Versions: []social.ImageFile{{Size: 48, MIME: "image/jpeg", Bytes: 3, Width: 4, Height: 4, Key: "profile/1/p1/48"}}}
	user := userRow{user: social.User{Name: "ann", Email: "a@example.com", Bio: "hello", CreatedAt: at,
		DisplayName: "Ann", Avatar: avatar}, pw: "$argon2id$x"}
	if got := roundTrip(profileRecord, user); !reflect.DeepEqual(got, user) {
		t.Errorf("profile read back %+v, wrote %+v", got, user)
	}
	var read userRow
	profileRead.decode(&read, reply(profileRecord.encode(&user), profileRead.args))
	if want := (userRow{user: user.user}); !reflect.DeepEqual(read, want) {
		t.Errorf("a page's profile read %+v, want %+v (no password)", read, want)
	}
	for _, c := range []commentRow{
		{comment: social.Comment{AuthorID: "1", Content: "nice", CreatedAt: at}},
		{comment: social.Comment{AuthorID: "1", Content: "@b", CreatedAt: at}, mentions: []string{"2"}},
		{comment: social.Comment{CreatedAt: at}, deletedBy: "5"},
	} {
		if got := roundTrip(commentRecord, c); !reflect.DeepEqual(got, c) {
			t.Errorf("comment read back %+v, wrote %+v", got, c)
		}
	}
}

// TestPostCounterMissing: a post hash without counters (older data) says
// so, counter by counter, and one without cm says it has none.
func TestPostCounterMissing(t *testing.T) {
	var r postRow
	postRecord.decode(&r, reply([]any{"author", "1", "ncomments", "2"}, postRecord.all))
	if r.countsMissing != countLikes|countReposts || r.counts.Comments != 2 || r.hasPacked {
		t.Errorf("decoded %+v", r)
	}
}

// nonRecordFields are the fields of the hashes that are not records
// (record.go), which scripts name themselves: the home mark, the
// notification counters, the session, the idempotency keys, the e-mail
// tokens (h, x, e).
var nonRecordFields = []string{"active", "floor", "stale", "pull", "pullprev", "pullat", "read", "act", "seq", "uid", "cur", "prev", "at", "old",
	"h", "st", "o", "a", "exp", "x", "e"}

var (
	// hashCall is a hash command in a script, to the end of its line.
	hashCall = regexp.MustCompile(`redis\.call\('(HGET|HMGET|HSET|HSETNX|HDEL|HEXISTS|HINCRBY|HINCRBYFLOAT|HSTRLEN)',[^,]+,(.*)`)
	quoted   = regexp.MustCompile(`'([a-z][a-z0-9]*)'`)
	luaField = regexp.MustCompile(`\bF\.([a-z]+)\.([a-z0-9_]+)`)
)

// TestLuaFieldNames: the scripts name a record's field only through the
// tables the store prepends (F.<record>.<field>, luaPrelude), each of
// which is in its record's table; a field name written in a hash command
// is one of the hashes that are not records.
func TestLuaFieldNames(t *testing.T) {
	records := map[string][]string{}
	for _, r := range allRecords() {
		records[r.lua] = r.names
	}
	var files int
	err := fs.WalkDir(luaFiles, "lua", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		src, err := luaFiles.ReadFile(path)
		if err != nil {
			return err
		}
		for n, line := range strings.Split(string(src), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "--") {
				continue
			}
			for _, m := range luaField.FindAllStringSubmatch(line, -1) {
				if !slices.Contains(records[m[1]], m[2]) {
					t.Errorf("%s:%d: %s is not a field of a record", path, n+1, m[0])
				}
			}
			for _, c := range hashCall.FindAllStringSubmatch(line, -1) {
				for _, q := range quoted.FindAllStringSubmatch(c[2], -1) {
					if !slices.Contains(nonRecordFields, q[1]) {
						t.Errorf("%s:%d: %s names field %q: a record's field comes from F (records.go), another hash's is listed in nonRecordFields", path, n+1, c[1], q[1])
					}
				}
			}
		}
		return nil
	})
	if err != nil || files < 30 {
		t.Fatalf("read %d scripts: %v", files, err)
	}
}

// TestLuaFieldNamesFails: the checks of TestLuaFieldNames catch a field
// retyped in a script, and one the tables do not have.
func TestLuaFieldNamesFails(t *testing.T) {
	for _, line := range []string{
		`redis.call('HSET', KEYS[1], 'nlikes', n)`,
		`redis.call('HMGET', prefix .. id, 'author', 'content')`,
	} {
		if m := hashCall.FindStringSubmatch(line); m == nil || quoted.FindStringSubmatch(m[2]) == nil {
			t.Errorf("not caught: %s", line)
		}
	}
	if m := luaField.FindStringSubmatch(`set_count(KEYS[1], F.post.nlikez, 1)`); m == nil || m[2] != "nlikez" {
		t.Errorf("a misspelt F field not found: %v", m)
	}
}
