package redisstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/social"
)

// TestNewerPages reads every reader's home timeline upwards from each of
// its posts with before, in every fan-out mode, past the list's cap and
// its floor, with pulled authors, blocks, mutes and audiences: each page is
// the posts just above the cursor, newest first, as the pages read
// downwards have them, and walking up by startCursor from the oldest post
// gives the whole timeline back.
func TestNewerPages(t *testing.T) {
	sc := randomScenario(rand.New(rand.NewPCG(5, 17)), 10, 80)
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			cfg := feedConfig(mode)
			cfg.HomeCap = 10
			cfg.Backfill = 6
			cfg.CelebrityThreshold = 3
			s, rdb := feedStore(t, cfg)
			a := sc.apply(t, s, feedWorker(t, s, rdb))
			ctx := context.Background()
			for _, v := range a.users {
				all := home(t, s, v, 7) // newest first
				for _, first := range []int{1, 3, 20} {
					for i, id := range all {
						page, err := newerIDs(ctx, s, v, first, social.EncodeCursor(id))
						feedOK(t, err)
						want := all[max(0, i-first):i]
						if !slices.Equal(page.Items, want) || page.HasPrevious != (i > first) || page.HasNext {
							t.Fatalf("user %s, first %d, before %s (#%d): %v hasPrevious %v, want %v hasPrevious %v",
								v, first, id, i, page.Items, page.HasPrevious, want, i > first)
						}
					}
				}
				if len(all) == 0 {
					continue
				}
				var up []string
				cursor := social.EncodeCursor(all[len(all)-1])
				for range len(all) {
					page, err := newerIDs(ctx, s, v, 4, cursor)
					feedOK(t, err)
					up = append(slices.Clone(page.Items), up...)
					if !page.HasPrevious {
						break
					}
					cursor = page.StartCursor()
				}
				if want := all[:len(all)-1]; !slices.Equal(up, want) {
					t.Fatalf("user %s walking up: %v, want %v", v, up, want)
				}
			}
		})
	}
}

// A newer page sees posts made after the cursor was handed out, and
// refuses after with before, and malformed cursors.
func TestNewerPagesLiveAndErrors(t *testing.T) {
	s, rdb := feedStore(t)
	w := feedWorker(t, s, rdb)
	ctx := context.Background()
	u := feedUsers(t, s, 2)
	reader, author := u[0], u[1]
	feedOK(t, s.Follow(ctx, reader, author))
	var ids []string
	for i := range 5 {
		ids = append(ids, feedPost(t, s, author, social.NewPost{Content: fmt.Sprint("post ", i)}).ID)
	}
	drain(t, w)
	top := social.EncodeCursor(ids[4])
	page, err := newerIDs(ctx, s, reader, 10, top)
	feedOK(t, err)
	if len(page.Items) != 0 || page.HasPrevious || page.StartCursor() != "" {
		t.Fatalf("nothing newer: %+v", page)
	}
	later := feedPost(t, s, author, social.NewPost{Content: "later"}).ID
	drain(t, w)
	page, err = newerIDs(ctx, s, reader, 10, top)
	feedOK(t, err)
	if !slices.Equal(page.Items, []string{later}) {
		t.Fatalf("after a new post: %+v", page)
	}

	for name, p := range map[string]social.PageRequest{
		"malformed":  {First: 5, Before: "nope"},
		"bad first":  {First: 0, Before: top},
		"not an id":  {First: 5, Before: social.EncodeCursor("x")},
		"first 101":  {First: 101, Before: top},
		"zero-width": {First: 5, Before: social.EncodeCursor("")},
	} {
		if _, err := s.HomePage(ctx, reader, p, readplan.PageWants{}); !social.IsCode(err, social.BadUserInput) {
			t.Errorf("%s: %v, want BAD_USER_INPUT", name, err)
		}
	}
	if _, err := social.NewTwoWayRequest(nil, &top, &top); !social.IsCode(err, social.BadUserInput) {
		t.Errorf("after and before: %v", err)
	}
}

func newerIDs(ctx context.Context, s interface {
	HomePage(context.Context, string, social.PageRequest, readplan.PageWants) (*readplan.Page, error)
}, viewer string, first int, before string) (social.Connection[string], error) {
	page, err := s.HomePage(ctx, viewer, social.PageRequest{First: first, Before: before}, readplan.PageWants{})
	if err != nil {
		return social.Connection[string]{}, err
	}
	return social.PostIDs(page.Posts), nil
}
