package social_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/socialgw/gateway/internal/social"
)

func TestValidatePostAndComment(t *testing.T) {
	tests := []struct {
		name    string
		check   func(string) (string, error)
		in      string
		want    string
		invalid bool
	}{
		{"post trimmed", social.ValidatePostContent, "  hi  ", "hi", false},
		{"post empty", social.ValidatePostContent, " \n ", "", true},
		{"post at the limit", social.ValidatePostContent, strings.Repeat("é", social.MaxPostLen), strings.Repeat("é", social.MaxPostLen), false},
		{"post over the limit", social.ValidatePostContent, strings.Repeat("x", social.MaxPostLen+1), "", true},
		{"comment trimmed", social.ValidateComment, "\tok\n", "ok", false},
		{"comment empty", social.ValidateComment, "", "", true},
		{"comment at the limit", social.ValidateComment, strings.Repeat("x", social.MaxCommentLen), strings.Repeat("x", social.MaxCommentLen), false},
		{"comment over the limit", social.ValidateComment, strings.Repeat("x", social.MaxCommentLen+1), "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.check(tt.in)
			if tt.invalid {
				if !social.IsCode(err, social.BadUserInput) {
					t.Fatalf("err = %v, want BAD_USER_INPUT", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestValidateAudience(t *testing.T) {
	many := make([]string, social.MaxAudienceSize+1)
	for i := range many {
		many[i] = "1"
	}
	tests := []struct {
		name    string
		in      social.NewPost
		vis     social.Visibility
		list    []string
		invalid bool
	}{
		{"public", social.NewPost{}, social.Public, []string{}, false},
		{"empty notTo is public", social.NewPost{NotTo: []string{}}, social.Public, []string{}, false},
		{"onlyTo deduplicated", social.NewPost{OnlyTo: []string{"2", "3", "2"}}, social.OnlyTo, []string{"2", "3"}, false},
		{"notTo", social.NewPost{NotTo: []string{"5"}}, social.NotTo, []string{"5"}, false},
		{"both lists", social.NewPost{OnlyTo: []string{"1"}, NotTo: []string{"2"}}, "", nil, true},
		{"empty onlyTo", social.NewPost{OnlyTo: []string{}}, "", nil, true},
		{"not an id", social.NewPost{OnlyTo: []string{"u1"}}, "", nil, true},
		{"too many", social.NewPost{NotTo: many}, "", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vis, list, err := social.ValidateAudience(tt.in)
			if tt.invalid {
				if !social.IsCode(err, social.BadUserInput) {
					t.Fatalf("err = %v, want BAD_USER_INPUT", err)
				}
				return
			}
			if err != nil || vis != tt.vis || !slices.Equal(list, tt.list) {
				t.Fatalf("got %s %v %v; want %s %v", vis, list, err, tt.vis, tt.list)
			}
		})
	}
}

func TestValidateFirst(t *testing.T) {
	for _, n := range []int{1, social.DefaultFirst, social.MaxFirst} {
		if err := social.ValidateFirst(n); err != nil {
			t.Errorf("first %d: %v", n, err)
		}
	}
	for _, n := range []int{-1, 0, social.MaxFirst + 1} {
		if err := social.ValidateFirst(n); !social.IsCode(err, social.BadUserInput) {
			t.Errorf("first %d: err = %v, want BAD_USER_INPUT", n, err)
		}
	}
}

func TestIsID(t *testing.T) {
	tests := map[string]bool{
		"1": true, "42": true, "9223372036854775807": true,
		"": false, "0": false, "007": false, "-1": false, "1a": false, " 1": false,
		"9223372036854775808": false, "12345678901234567890": false,
	}
	for in, want := range tests {
		if got := social.IsID(in); got != want {
			t.Errorf("IsID(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestPostAccess(t *testing.T) {
	post := func(vis social.Visibility) *social.Post {
		return &social.Post{ID: "10", AuthorID: "1", Visibility: vis}
	}
	tests := []struct {
		name   string
		viewer string
		post   *social.Post
		facts  social.AccessFacts
		want   social.Access
	}{
		{"missing", "2", nil, social.AccessFacts{}, social.Missing},
		{"missing to anonymous", "", nil, social.AccessFacts{}, social.Missing},
		{"public to anonymous", "", post(social.Public), social.AccessFacts{}, social.Visible},
		{"notTo to anonymous", "", post(social.NotTo), social.AccessFacts{}, social.Hidden},
		{"onlyTo to anonymous", "", post(social.OnlyTo), social.AccessFacts{}, social.Hidden},
		{"public", "2", post(social.Public), social.AccessFacts{}, social.Visible},
		{"onlyTo, listed", "2", post(social.OnlyTo), social.AccessFacts{InOnlyTo: true}, social.Visible},
		{"onlyTo, not listed", "2", post(social.OnlyTo), social.AccessFacts{}, social.Hidden},
		{"notTo, listed", "2", post(social.NotTo), social.AccessFacts{InNotTo: true}, social.Hidden},
		{"notTo, not listed", "2", post(social.NotTo), social.AccessFacts{}, social.Visible},
		{"blocked wins over audience", "2", post(social.OnlyTo), social.AccessFacts{Blocked: true, InOnlyTo: true}, social.Blocked},
		{"blocked public", "2", post(social.Public), social.AccessFacts{Blocked: true}, social.Blocked},
		{"author sees own onlyTo", "1", post(social.OnlyTo), social.AccessFacts{}, social.Visible},
		{"author sees own notTo though listed", "1", post(social.NotTo), social.AccessFacts{InNotTo: true}, social.Visible},
		{"locked to anonymous", "", post(social.Public), social.AccessFacts{AuthorLocked: true}, social.Hidden},
		{"locked to a non-follower", "2", post(social.Public), social.AccessFacts{AuthorLocked: true}, social.Hidden},
		{"locked to a follower", "2", post(social.Public), social.AccessFacts{AuthorLocked: true, FollowsAuthor: true}, social.Visible},
		{"locked to its author", "1", post(social.Public), social.AccessFacts{AuthorLocked: true}, social.Visible},
		{"locked onlyTo to a follower not listed", "2", post(social.OnlyTo), social.AccessFacts{AuthorLocked: true, FollowsAuthor: true}, social.Hidden},
		{"locked notTo to a listed follower", "2", post(social.NotTo), social.AccessFacts{AuthorLocked: true, FollowsAuthor: true, InNotTo: true}, social.Hidden},
		{"locked and blocked", "2", post(social.Public), social.AccessFacts{AuthorLocked: true, FollowsAuthor: true, Blocked: true}, social.Blocked},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := social.PostAccess(tt.viewer, tt.post, tt.facts); got != tt.want {
				t.Fatalf("PostAccess = %s, want %s", got, tt.want)
			}
		})
	}
}

// TestCheckNewPostSpoiler: a spoiler text follows the rules of content
// within its own bound; an empty one is none.
func TestCheckNewPostSpoiler(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     *string
		invalid  bool
	}{
		{"none", "", nil, false},
		{"blank is none", " \t ", nil, false},
		{"trimmed", "  spoilers ahead ", ptr("spoilers ahead"), false},
		{"longest", strings.Repeat("é", social.MaxSpoilerLen), ptr(strings.Repeat("é", social.MaxSpoilerLen)), false},
		{"too long", strings.Repeat("é", social.MaxSpoilerLen+1), nil, true},
		{"control character", "a\x07b", nil, true},
		{"bidi override", "a\u202eb", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := social.CheckNewPost(social.NewPost{Content: "hi", SpoilerText: tc.in, Sensitive: true})
			if tc.invalid {
				if !social.IsCode(err, social.BadUserInput) {
					t.Fatalf("err = %v, want BAD_USER_INPUT", err)
				}
				return
			}
			if err != nil || !p.Sensitive || (p.Spoiler == nil) != (tc.want == nil) || (p.Spoiler != nil && *p.Spoiler != *tc.want) {
				t.Fatalf("CheckNewPost = %+v, %v; want spoiler %v", p, err, tc.want)
			}
		})
	}
}

func ptr(s string) *string { return &s }

func TestWithoutCommentsOf(t *testing.T) {
	page := func(authors string, hasNext bool) social.Connection[*social.Comment] {
		var c social.Connection[*social.Comment]
		for i, a := range strings.Split(authors, "") {
			c.Items = append(c.Items, &social.Comment{ID: fmt.Sprint(i + 1), AuthorID: a})
			c.Cursors = append(c.Cursors, "c"+fmt.Sprint(i+1))
		}
		c.HasNext, c.Total = hasNext, 9
		return c
	}
	hidden := func(a string) bool { return a == "x" }
	for _, tc := range []struct {
		name    string
		in      social.Connection[*social.Comment]
		hide    func(string) bool
		ids     []string
		end     string
		hasNext bool
	}{
		{"none hidden", page("abc", true), hidden, []string{"1", "2", "3"}, "c3", true},
		{"no viewer", page("axc", true), nil, []string{"1", "2", "3"}, "c3", true},
		{"middle hidden", page("axc", true), hidden, []string{"1", "3"}, "c3", true},
		{"last hidden: the next page starts past it", page("abx", true), hidden, []string{"1", "2"}, "c3", true},
		{"all hidden: empty, and goes on", page("xx", true), hidden, nil, "c2", true},
		{"last page", page("ax", false), hidden, []string{"1"}, "c1", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := social.WithoutCommentsOf(tc.in, tc.hide)
			var ids []string
			for _, c := range got.Items {
				ids = append(ids, c.ID)
			}
			if !slices.Equal(ids, tc.ids) || got.EndCursor() != tc.end || got.HasNext != tc.hasNext || got.Total != 9 || len(got.Cursors) != len(got.Items) {
				t.Errorf("got %v end %q hasNext %v total %d", ids, got.EndCursor(), got.HasNext, got.Total)
			}
		})
	}
}
