package redisstore_test

import (
	"context"
	"testing"

	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/social"
)

// unreadCount is the number of unread notifications the list returns,
// after posts, comments and follows under a populated list are deleted; a
// deleted post's notifications go, its comments' with them.
func TestUnreadCountAgreesWithList(t *testing.T) {
	s, rdb := feedStore(t, feedConfig(redisstore.Push))
	w := feedWorker(t, s, rdb)
	ctx := context.Background()
	u := feedUsers(t, s, 4)
	owner, a, b, c := u[0], u[1], u[2], u[3]
	var posts []string
	for range 3 {
		posts = append(posts, feedPost(t, s, owner, social.NewPost{}).ID)
	}
	var comments []string
	for _, p := range posts {
		feedOK(t, s.Like(ctx, a, p))
		cm, err := s.AddComment(ctx, b, p, "nice")
		feedOK(t, err)
		comments = append(comments, cm.ID)
	}
	for _, f := range []string{a, b, c} {
		feedOK(t, s.Follow(ctx, f, owner))
	}
	drain(t, w)

	steps := []struct {
		name string
		do   func() error
	}{
		{"delete a post", func() error { return s.DeletePost(ctx, owner, posts[0]) }},
		{"delete a comment", func() error { return s.DeleteComment(ctx, b, comments[1]) }},
		{"unfollow", func() error { return s.Unfollow(ctx, c, owner) }},
	}
	for _, st := range steps {
		feedOK(t, st.do())
		drain(t, w)
		page, err := s.Notifications(ctx, owner, social.PageRequest{First: 100}, 3)
		feedOK(t, err)
		walked := 0
		for _, n := range page.Items {
			if !n.Read {
				walked++
			}
			if n.PostID == posts[0] {
				t.Errorf("%s: a notification about the deleted post: %+v", st.name, n)
			}
		}
		if page.HasNext || page.Unread != walked {
			t.Errorf("%s: unreadCount %d, the list holds %d unread (hasNext %v)", st.name, page.Unread, walked, page.HasNext)
		}
	}
}
