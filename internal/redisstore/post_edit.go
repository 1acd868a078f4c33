package redisstore

import (
	"context"
	"fmt"

	"github.com/socialgw/gateway/internal/social"
)

// setPostFields writes the named fields of post id from p, while the post
// exists: the write of a post after its creation. Only mutable fields
// may be written (postRecord.update): the post cache keeps the fixed
// ones for as long as the post lives, and reads the mutable ones with
// every check, so a write shows on the next read of every gateway.
func (s *PostService) setPostFields(ctx context.Context, id string, p *social.Post, fields ...string) error {
	fv, err := postRecord.update(&postRow{post: *p}, fields)
	if err != nil {
		return err
	}
	if !social.IsID(id) {
		return social.Errorf(social.NotFound, "post %s not found", id)
	}
	n, err := updateIfExistsScript.Run(ctx, s.rdb, []string{s.keys.Post(id)}, fv...).Int()
	if err != nil {
		return fmt.Errorf("update post %s: %w", id, err)
	}
	if n == 0 {
		return social.Errorf(social.NotFound, "post %s not found", id)
	}
	return nil
}
