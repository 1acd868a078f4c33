package redisstore_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/socialgw/gateway/internal/social"
)

// TestPostViews reads posts of every visibility through post_view.lua
// and checks them against the plain reads of the same facts: the posts
// (VisiblePosts' verdicts, spelled out per case), the counters
// (PostCounts), the marks (Marks) and the first comments
// (PostCommentsPage).
func TestPostViews(t *testing.T) {
	ctx := context.Background()
	f := newEngagementFixture(t)
	s := f.s
	only := engPost(t, s, f.author, social.NewPost{Content: "only", OnlyTo: []string{f.fan}})
	not := engPost(t, s, f.author, social.NewPost{Content: "not", NotTo: []string{f.fan}})
	gone := engPost(t, s, f.author, social.NewPost{Content: "gone"})
	feedOK(t, s.DeletePost(ctx, f.author, gone))
	for _, u := range []string{f.fan, f.other} {
		feedOK(t, s.Like(ctx, u, f.public))
	}
	feedOK(t, s.Like(ctx, f.other, not))
	for _, c := range []string{"one", "two", "three", "four"} {
		if _, err := s.AddComment(ctx, f.other, f.public, c); err != nil {
			t.Fatal(err)
		}
	}
	engPost(t, s, f.fan, social.NewPost{RepostOf: f.public})
	ids := []string{f.public, only, not, gone, "x"}

	for _, tc := range []struct {
		name    string
		viewer  string
		visible []bool // per id: the post is shown
	}{
		{"the author", f.author, []bool{true, true, true, false, false}},
		{"in onlyTo and notTo", f.fan, []bool{true, true, false, false, false}},
		{"a stranger", f.other, []bool{true, false, true, false, false}},
		{"anonymous", "", []bool{true, false, false, false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			views, err := s.PostViews(ctx, tc.viewer, ids, 3)
			if err != nil {
				t.Fatal(err)
			}
			posts, err := s.VisiblePosts(ctx, tc.viewer, ids)
			if err != nil {
				t.Fatal(err)
			}
			counts, err := s.PostCounts(ctx, ids)
			if err != nil {
				t.Fatal(err)
			}
			marks := make([]social.Marks, len(ids))
			if tc.viewer != "" {
				if marks, err = s.Marks(ctx, tc.viewer, ids); err != nil {
					t.Fatal(err)
				}
			}
			for i, id := range ids {
				v := views[i]
				if got := posts[i] != nil; got != tc.visible[i] {
					t.Errorf("post %s shown: %v, want %v", id, got, tc.visible[i])
				}
				if (v.Post == nil) != (i >= 3) {
					t.Errorf("post %s read: %v", id, v.Post)
				}
				if v.Post == nil {
					if v.Counts != (social.PostCounts{}) || v.Marks != (social.Marks{}) || len(v.Comments.Items) > 0 {
						t.Errorf("missing post %s has extras: %+v", id, v)
					}
					continue
				}
				if v.Counts != counts[i] {
					t.Errorf("counts of %s: %+v, plain reads %+v", id, v.Counts, counts[i])
				}
				if v.Marks != marks[i] {
					t.Errorf("marks of %s: %+v, plain reads %+v", id, v.Marks, marks[i])
				}
				want, err := s.PostCommentsPage(ctx, id, social.PageRequest{First: 3})
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(want, v.Comments) {
					t.Errorf("comments of %s: %+v, plain reads %+v", id, v.Comments, want)
				}
			}
		})
	}
}
