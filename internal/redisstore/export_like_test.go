package redisstore

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// LikeWithoutNote is Like without its note job: the same visibility read,
// then the like script alone in its pipeline. The benchmarks compare the
// two to show what notifications add to a like's request path.
func (s *Store) LikeWithoutNote(ctx context.Context, viewerID, postID string) error {
	if _, err := s.engageable(ctx, viewerID, postID); err != nil {
		return err
	}
	cmds, err := pipelined(ctx, s.DB.rdb, func(p redis.Pipeliner) error {
		likeScript.EvalSha(ctx, p, likeKeys(s.DB.keys, postID), viewerID, "like")
		return nil
	})
	return pipelineErr(cmds, err)
}
