package redisstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// CurationService keeps what users curate: bookmarks (private), pinned
// posts (on their profile) and lists of users they follow, each list with
// a timeline of its own (curation_*.go). Its pages read their posts
// through the timelines' visibility check and page fetch, so a bookmarks
// or list page brings what the query asks along in the round trips of a
// home page.
type CurationService struct {
	rdb   redis.UniversalClient
	keys  Keys
	set   *settings        // the clock, the post cache
	pages *TimelineService // the page fetch its pages share
}

// NewCurationService returns the curation service beside the timelines'.
func NewCurationService(t *TimelineService) *CurationService {
	return &CurationService{rdb: t.rdb, keys: t.keys, set: t.set, pages: t}
}

// now is the store's clock.
func (s *CurationService) now() time.Time { return s.set.now() }

// posts reads posts' hashes and checks them for a viewer.
func (s *CurationService) posts() postReader {
	return s.set.postReader(s.rdb, s.keys)
}

// ListFeedCap is the number of entries a list's timeline keeps, as
// HOME_CAP bounds a home list: older posts of its members leave it.
const ListFeedCap = 800

// listBackfill is how many of a new member's newest posts join the list's
// timeline when they are added.
const listBackfill = 40

// The scripts of curation (lua/bookmark.lua ...).
var (
	bookmarkScript    = newScript("bookmark.lua", "flags")
	pinUserScript     = newScript("pin_user.lua")
	pinPostScript     = newScript("pin_post.lua")
	listWriteScript   = newScript("list_create.lua")
	listMembersScript = newScript("list_members.lua")
	listDropScript    = newScript("list_drop.lua")
	listDeliverScript = newScript("list_deliver.lua")
	listPageScript    = newScript("list_page.lua")
)

func init() {
	pipelinedScripts = append(pipelinedScripts, bookmarkScript, listDeliverScript, listPageScript, listDropScript)
}

// listEntry is a list timeline's entry of a post: "<post id>:<author id>",
// as a home list's (homeEntry).
func listEntry(post, author string) string { return post + ":" + author }

// listRef names one list in ListedIn: "<owner>:<list id>".
func listRef(owner, lid string) string { return owner + ":" + lid }

func splitListRef(ref string) (owner, lid string, ok bool) {
	owner, lid, ok = strings.Cut(ref, ":")
	return owner, lid, ok && social.IsID(owner) && social.IsID(lid)
}

// deliverToLists puts a new post into the timelines of the lists its
// author is a member of: ListedIn (the author's slot), then one
// listDeliverScript per list in one pipeline (each in its owner's slot,
// which checks the author is still a member). Two round trips whatever
// the number of lists; idempotent, so the fan-out job may run it again.
// Lists are fanned out in every feed mode: their cost follows the lists
// an author is in, not their followers.
func deliverToLists(ctx context.Context, rdb redis.UniversalClient, k Keys, post, author string) error {
	refs, err := rdb.SMembers(ctx, k.ListedIn(author)).Result()
	if err != nil || len(refs) == 0 {
		return wrapErr(err, "read the lists of %s", author)
	}
	entry := listEntry(post, author)
	cmds, err := pipelined(ctx, rdb, func(p redis.Pipeliner) error {
		for _, ref := range refs {
			if owner, lid, ok := splitListRef(ref); ok {
				listDeliverScript.EvalSha(ctx, p, []string{k.ListMembers(owner, lid), k.ListFeed(owner, lid)}, author, post, entry, ListFeedCap)
			}
		}
		return nil
	})
	return wrapErr(pipelineErr(cmds, err), "deliver post %s to lists", post)
}

// deletePostCuration takes a deleted post out of what users curate: the
// Bookmarks of those in PostBookmarkers, the author's Pins, and the
// timelines of the lists the author is in; then PostBookmarkers goes.
// Each step is idempotent, for the delete job's retries; the set goes
// last, so a retry still finds whom to clean.
func deletePostCuration(ctx context.Context, rdb redis.UniversalClient, k Keys, post, author string) error {
	var bookmarkers, refs *redis.StringSliceCmd
	if _, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		bookmarkers = p.SMembers(ctx, k.PostBookmarkers(post))
		refs = p.SMembers(ctx, k.ListedIn(author))
		return nil
	}); err != nil {
		return fmt.Errorf("read the bookmarks and lists of post %s: %w", post, err)
	}
	entry := listEntry(post, author)
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, u := range bookmarkers.Val() {
			p.ZRem(ctx, k.Bookmarks(u), post)
		}
		for _, ref := range refs.Val() {
			if owner, lid, ok := splitListRef(ref); ok {
				p.ZRem(ctx, k.ListFeed(owner, lid), entry)
			}
		}
		p.ZRem(ctx, k.Pins(author), post)
		return nil
	})
	if err != nil {
		return fmt.Errorf("take post %s out of bookmarks, pins and lists: %w", post, err)
	}
	return wrapErr(rdb.Del(ctx, k.PostBookmarkers(post)).Err(), "drop the bookmarkers of post %s", post)
}

// wrapErr wraps a non-nil error with context.
func wrapErr(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}
