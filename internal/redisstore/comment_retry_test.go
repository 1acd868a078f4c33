package redisstore_test

import (
	"context"
	"testing"

	"github.com/socialgw/gateway/internal/social"
)

// A comment whose notification job could not be queued (the XADD failed
// after the comment was written) is answered with an error, and the
// client retries: the retry gets the same comment back, with its job
// queued this time, and writes no second one. A deliberate second comment
// with the same text, once the first succeeded, is a comment of its own.
func TestAddCommentRetryAfterQueueFailure(t *testing.T) {
	s, rdb := feedStore(t)
	ctx := context.Background()
	u := feedUsers(t, s, 2)
	post := feedPost(t, s, u[0], social.NewPost{})
	stream := s.Keys().FanoutStream()
	comments := s.Keys().PostComments(post.ID)

	// Make the XADD fail: the stream's key holds a string meanwhile.
	feedOK(t, rdb.Rename(ctx, stream, stream+":saved").Err())
	feedOK(t, rdb.Set(ctx, stream, "not a stream", 0).Err())
	if _, err := s.AddComment(ctx, u[1], post.ID, "first!"); err == nil {
		t.Fatal("AddComment succeeded with its job unqueued")
	}
	if n := rdb.LLen(ctx, comments).Val(); n != 1 {
		t.Fatalf("%d comments after the failed call, want the 1 written before the XADD", n)
	}
	feedOK(t, rdb.Del(ctx, stream).Err())
	feedOK(t, rdb.Rename(ctx, stream+":saved", stream).Err())
	before := rdb.XLen(ctx, stream).Val()

	c, err := s.AddComment(ctx, u[1], post.ID, "first!")
	feedOK(t, err)
	if ids := rdb.LRange(ctx, comments, 0, -1).Val(); len(ids) != 1 || ids[0] != c.ID {
		t.Fatalf("comments after the retry = %v, want only %s", ids, c.ID)
	}
	if c.Content != "first!" || c.AuthorID != u[1] || c.PostID != post.ID {
		t.Fatalf("retry answered %+v", c)
	}
	if got := rdb.XLen(ctx, stream).Val(); got != before+1 {
		t.Fatalf("the retry queued %d jobs, want 1", got-before)
	}
	got, err := s.Comments(ctx, []string{c.ID})
	feedOK(t, err)
	if got[0] == nil || got[0].Content != "first!" {
		t.Fatalf("comment %s = %+v", c.ID, got[0])
	}

	again, err := s.AddComment(ctx, u[1], post.ID, "first!")
	feedOK(t, err)
	if again.ID == c.ID || rdb.LLen(ctx, comments).Val() != 2 {
		t.Fatalf("a second comment with the same text after success = %s (first %s), %d comments", again.ID, c.ID, rdb.LLen(ctx, comments).Val())
	}
}
