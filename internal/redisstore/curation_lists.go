package redisstore

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// Lists: the owner's Lists, ListMembers and ListFeed live in the owner's
// slot, so each change of a list is one script, all or nothing; ListedIn
// (each member's slot) is the reverse index fan-out and the delete job
// read. It always holds every list a user is a member of, and may hold
// lists they left (a delivery there checks membership and writes
// nothing): an add writes ListedIn before the list, a removal after it.

// CreateList makes a list of ownerID, at most social.MaxLists.
func (s *CurationService) CreateList(ctx context.Context, ownerID, title string) (*social.List, error) {
	title, err := social.ValidateListTitle(title)
	if err != nil {
		return nil, err
	}
	// Refuse before taking an id: a refused list leaves nothing.
	if n, err := s.rdb.HLen(ctx, s.keys.Lists(ownerID)).Result(); err != nil {
		return nil, fmt.Errorf("count the lists of %s: %w", ownerID, err)
	} else if n >= social.MaxLists {
		return nil, social.TooManyLists()
	}
	id, err := s.rdb.Incr(ctx, s.keys.ListSeq()).Result()
	if err != nil {
		return nil, fmt.Errorf("create list: %w", err)
	}
	lid := strconv.FormatInt(id, 10)
	if err := s.writeList(ctx, ownerID, lid, title, "create"); err != nil {
		return nil, err
	}
	return &social.List{ID: lid, OwnerID: ownerID, Title: title}, nil
}

// RenameList renames one of ownerID's lists.
func (s *CurationService) RenameList(ctx context.Context, ownerID, lid, title string) (*social.List, error) {
	title, err := social.ValidateListTitle(title)
	if err != nil {
		return nil, err
	}
	if !social.IsID(lid) {
		return nil, social.ListNotFound(lid)
	}
	if err := s.writeList(ctx, ownerID, lid, title, "rename"); err != nil {
		return nil, err
	}
	return &social.List{ID: lid, OwnerID: ownerID, Title: title}, nil
}

func (s *CurationService) writeList(ctx context.Context, ownerID, lid, title, op string) error {
	n, err := listWriteScript.Run(ctx, s.rdb, []string{s.keys.Lists(ownerID)}, lid, title, op, social.MaxLists).Int()
	if err != nil {
		return fmt.Errorf("%s list %s: %w", op, lid, err)
	}
	if n == 0 && op == "create" {
		return social.TooManyLists()
	}
	if n == 0 {
		return social.ListNotFound(lid)
	}
	return nil
}

// Lists returns ownerID's lists, oldest first.
func (s *CurationService) Lists(ctx context.Context, ownerID string) ([]*social.List, error) {
	m, err := s.rdb.HGetAll(ctx, s.keys.Lists(ownerID)).Result()
	if err != nil {
		return nil, fmt.Errorf("read the lists of %s: %w", ownerID, err)
	}
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	out := make([]*social.List, len(ids))
	for i, id := range sortIDs(ids) {
		out[i] = &social.List{ID: id, OwnerID: ownerID, Title: m[id]}
	}
	return out, nil
}

// List returns one of ownerID's lists (ListNotFound for any other id).
func (s *CurationService) List(ctx context.Context, ownerID, lid string) (*social.List, error) {
	if !social.IsID(lid) {
		return nil, social.ListNotFound(lid)
	}
	title, err := s.rdb.HGet(ctx, s.keys.Lists(ownerID), lid).Result()
	if isNil(err) {
		return nil, social.ListNotFound(lid)
	}
	if err != nil {
		return nil, fmt.Errorf("read list %s: %w", lid, err)
	}
	return &social.List{ID: lid, OwnerID: ownerID, Title: title}, nil
}

// DeleteList deletes one of ownerID's lists, its members and timeline.
func (s *CurationService) DeleteList(ctx context.Context, ownerID, lid string) error {
	if !social.IsID(lid) {
		return social.ListNotFound(lid)
	}
	k := s.keys
	members, err := listDropScript.Run(ctx, s.rdb, []string{k.Lists(ownerID)}, k.ListMembers(ownerID, ""), lid, "", k.ListFeed(ownerID, "")).StringSlice()
	if isNil(err) {
		return social.ListNotFound(lid)
	}
	if err != nil {
		return fmt.Errorf("delete list %s: %w", lid, err)
	}
	return s.unlist(ctx, ownerID, members, lid)
}

// unlist removes the ListedIn entries of users who left lids of owner.
func (s *CurationService) unlist(ctx context.Context, owner string, users []string, lids ...string) error {
	if len(users) == 0 || len(lids) == 0 {
		return nil
	}
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, u := range users {
			for _, lid := range lids {
				p.SRem(ctx, s.keys.ListedIn(u), listRef(owner, lid))
			}
		}
		return nil
	})
	return wrapErr(err, "update the lists %s's members are in", owner)
}

// AddToList adds users ownerID follows to one of their lists, all or
// nothing: an unknown list, a user not followed or a list that would pass
// social.MaxListMembers changes nothing. The new members' newest posts
// join the list's timeline.
func (s *CurationService) AddToList(ctx context.Context, ownerID, lid string, users []string) (*social.List, error) {
	users, err := social.ValidateListMembers(users)
	if err != nil {
		return nil, err
	}
	l, err := s.List(ctx, ownerID, lid)
	if err != nil {
		return nil, err
	}
	k := s.keys
	// One pipeline: whether the owner follows each user, the list's size,
	// and each user's newest posts the owner may see (the backfill, read
	// through the reader's index).
	var follows *redis.FloatSliceCmd
	var size *redis.IntCmd
	posts := make([]*authorRead, len(users))
	if _, err := pipelined(ctx, s.rdb, func(p redis.Pipeliner) error {
		follows = p.ZMScore(ctx, k.Following(ownerID), users...)
		size = p.ZCard(ctx, k.ListMembers(ownerID, lid))
		for i, u := range users {
			posts[i] = queueAuthorWindow(ctx, p, k, u, ownerID, authorWindow{from: "+inf", to: "-inf", count: listBackfill, newestFirst: true})
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("add to list %s: %w", lid, err)
	}
	for i, f := range follows.Val() {
		if f == 0 {
			return nil, social.NotFollowed(users[i])
		}
	}
	if have := int(size.Val()); have+len(users) > social.MaxListMembers {
		if err := s.checkRoom(ctx, ownerID, lid, users, have); err != nil {
			return nil, err
		}
	}
	if err := s.listUsers(ctx, ownerID, lid, users, true); err != nil {
		return nil, err
	}
	args := []any{lid, "add", s.now().UnixMilli(), social.MaxListMembers, ListFeedCap, len(users)}
	for _, u := range users {
		args = append(args, u)
	}
	for i, u := range users {
		for _, id := range posts[i].Val() {
			args = append(args, id, listEntry(id, u))
		}
	}
	if err := s.runMembers(ctx, ownerID, lid, args); err != nil {
		// Refused by a change between the checks and the script: the
		// ListedIn entries written stay (members before may hold them
		// too), and cost a delivery only a membership check.
		return nil, err
	}
	return l, nil
}

// checkRoom tells whether users fit in a list of have members: those
// already in it take no room.
func (s *CurationService) checkRoom(ctx context.Context, ownerID, lid string, users []string, have int) error {
	in, err := s.rdb.ZMScore(ctx, s.keys.ListMembers(ownerID, lid), users...).Result()
	if err != nil {
		return fmt.Errorf("add to list %s: %w", lid, err)
	}
	fresh := 0
	for _, sc := range in {
		if sc == 0 {
			fresh++
		}
	}
	if have+fresh > social.MaxListMembers {
		return social.TooManyMembers(have, fresh)
	}
	return nil
}

// listUsers writes (add) or removes the ListedIn entries of users for
// owner's list lid.
func (s *CurationService) listUsers(ctx context.Context, owner, lid string, users []string, add bool) error {
	if !add {
		return s.unlist(ctx, owner, users, lid)
	}
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, u := range users {
			p.SAdd(ctx, s.keys.ListedIn(u), listRef(owner, lid))
		}
		return nil
	})
	return wrapErr(err, "add to list %s", lid)
}

// runMembers runs listMembersScript and turns its refusals into errors.
func (s *CurationService) runMembers(ctx context.Context, ownerID, lid string, args []any) error {
	k := s.keys
	res, err := listMembersScript.Run(ctx, s.rdb, []string{k.Lists(ownerID), k.ListMembers(ownerID, lid), k.ListFeed(ownerID, lid), k.Following(ownerID)}, args...).Slice()
	if err != nil {
		return fmt.Errorf("change the members of list %s: %w", lid, err)
	}
	switch res[0] {
	case "ok":
		return nil
	case "nolist":
		return social.ListNotFound(lid)
	case "notfollowed":
		return social.NotFollowed(fmt.Sprint(res[1]))
	case "toomany":
		have, _ := res[1].(int64)
		fresh, _ := res[2].(int64)
		return social.TooManyMembers(int(have), int(fresh))
	}
	return fmt.Errorf("change the members of list %s: unexpected reply %v", lid, res)
}

// RemoveFromList takes users out of one of ownerID's lists, with their
// posts in its timeline; users not in it are ignored.
func (s *CurationService) RemoveFromList(ctx context.Context, ownerID, lid string, users []string) (*social.List, error) {
	users, err := social.ValidateListMembers(users)
	if err != nil {
		return nil, err
	}
	l, err := s.List(ctx, ownerID, lid)
	if err != nil {
		return nil, err
	}
	args := []any{lid, "remove", 0, social.MaxListMembers, ListFeedCap, len(users)}
	for _, u := range users {
		args = append(args, u)
	}
	if err := s.runMembers(ctx, ownerID, lid, args); err != nil {
		return nil, err
	}
	return l, s.listUsers(ctx, ownerID, lid, users, false)
}

// Unfollowed takes userID out of every list of ownerID, with their posts
// in those lists' timelines: run when ownerID stops following userID (an
// unfollow, or a block either way). Idempotent.
func (s *CurationService) Unfollowed(ctx context.Context, ownerID, userID string) error {
	return unfollowedLists(ctx, s.rdb, s.keys, ownerID, userID)
}

// unfollowedLists is Unfollowed for the graph's hooks.
func unfollowedLists(ctx context.Context, rdb redis.UniversalClient, k Keys, ownerID, userID string) error {
	lids, err := listDropScript.Run(ctx, rdb, []string{k.Lists(ownerID)}, k.ListMembers(ownerID, ""), "", userID, k.ListFeed(ownerID, "")).StringSlice()
	if err != nil {
		return fmt.Errorf("take %s out of the lists of %s: %w", userID, ownerID, err)
	}
	if len(lids) == 0 {
		return nil
	}
	_, err = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, lid := range lids {
			p.SRem(ctx, k.ListedIn(userID), listRef(ownerID, lid))
		}
		return nil
	})
	return wrapErr(err, "take %s out of the lists of %s", userID, ownerID)
}

// DeleteUserLists deletes every list of userID (account deletion), and
// their entries in the lists of others: re-runnable. The lists userID is
// a member of lose them when the follow edges go (Unfollowed); this takes
// what ListedIn still names.
func (s *CurationService) DeleteUserLists(ctx context.Context, userID string) error {
	lists, err := s.Lists(ctx, userID)
	if err != nil {
		return err
	}
	for _, l := range lists {
		if err := s.DeleteList(ctx, userID, l.ID); err != nil && !social.IsCode(err, social.NotFound) {
			return err
		}
	}
	refs, err := s.rdb.SMembers(ctx, s.keys.ListedIn(userID)).Result()
	if err != nil {
		return fmt.Errorf("read the lists %s is in: %w", userID, err)
	}
	for _, ref := range refs {
		if owner, _, ok := splitListRef(ref); ok {
			if err := s.Unfollowed(ctx, owner, userID); err != nil {
				return err
			}
		}
	}
	return wrapErr(s.rdb.Del(ctx, s.keys.ListedIn(userID)).Err(), "drop the lists %s is in", userID)
}
