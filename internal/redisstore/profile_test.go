package redisstore_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/social"
)

// picture is a stored picture as the media store would describe it.
func picture(user, id string, sizes ...int) *social.ProfileImage {
	img := &social.ProfileImage{ID: id, Original: social.ImageFile{MIME: "image/jpeg", Bytes: 900, Width: 640, Height: 480,
		Key: "profile/" + user + "/" + id + "/orig"}}
	for _, n := range sizes {
		img.Versions = append(img.Versions, social.ImageFile{Size: n, MIME: "image/jpeg", Bytes: int64(n), Width: n, Height: n,
			Key: fmt.Sprintf("profile/%s/%s/%d", user, id, n)})
	}
	return img
}

func str(s string) *string { return &s }

// TestUpdateProfile: each update changes what it names, reads back
// through Users (the page reads' HMGET), and returns the pictures it
// replaced or removed, once each.
func TestUpdateProfile(t *testing.T) {
	s, _ := graphStore(t)
	ps := redisstore.NewProfileService(s.DB)
	ctx := context.Background()
	id := graphUsers(t, s, 1)[0]
	a1, a2, h1 := picture(id, "a1", 48, 96, 400), picture(id, "a2", 48), picture(id, "h1", 600, 1500)
	steps := []struct {
		name     string
		update   social.ProfileUpdate
		replaced []*social.ProfileImage
		want     func(u *social.User)
	}{
		{"display name, normalised", social.ProfileUpdate{DisplayName: str("  Ame\u0301lie  ")}, nil,
			func(u *social.User) { u.DisplayName = "Am\u00e9lie" }},
		{"avatar and header", social.ProfileUpdate{Avatar: a1, Header: h1, Bio: str("hi")}, nil,
			func(u *social.User) { u.Avatar, u.Header, u.Bio = a1, h1, "hi" }},
		{"new avatar replaces", social.ProfileUpdate{Avatar: a2}, []*social.ProfileImage{a1},
			func(u *social.User) { u.Avatar = a2 }},
		{"bio alone leaves the pictures", social.ProfileUpdate{Bio: str("")}, nil,
			func(u *social.User) { u.Bio = "" }},
		{"remove both, clear the name", social.ProfileUpdate{RemoveAvatar: true, RemoveHeader: true, DisplayName: str(" ")},
			[]*social.ProfileImage{a2, h1}, func(u *social.User) { u.Avatar, u.Header, u.DisplayName = nil, nil, "" }},
		{"remove again: nothing", social.ProfileUpdate{RemoveAvatar: true}, nil, func(*social.User) {}},
	}
	want, err := s.User(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range steps {
		replaced, err := ps.UpdateProfile(ctx, id, st.update)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if !reflect.DeepEqual(replaced, st.replaced) {
			t.Errorf("%s: replaced %+v, want %+v", st.name, replaced, st.replaced)
		}
		st.want(want)
		got, err := s.User(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: user %+v\nwant %+v", st.name, got, want)
		}
	}
}

func TestUpdateProfileRefuses(t *testing.T) {
	s, rdb := graphStore(t)
	ps := redisstore.NewProfileService(s.DB)
	ctx := context.Background()
	id := graphUsers(t, s, 1)[0]
	before, err := rdb.HGetAll(ctx, s.Keys().User(id)).Result()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		user   string
		update social.ProfileUpdate
		code   social.Code
	}{
		{"bidi override", id, social.ProfileUpdate{DisplayName: str("evil\u202egpj.exe")}, social.BadUserInput},
		{"control character", id, social.ProfileUpdate{DisplayName: str("a\x07b")}, social.BadUserInput},
		{"two lines", id, social.ProfileUpdate{DisplayName: str("a\nb")}, social.BadUserInput},
		{"too long", id, social.ProfileUpdate{DisplayName: str(string(slices.Repeat([]rune{'é'}, social.MaxDisplayNameLen+1)))}, social.BadUserInput},
		{"bio too long with a valid picture", id, social.ProfileUpdate{Bio: str(string(make([]byte, 301))), Avatar: picture(id, "x", 48)}, social.BadUserInput},
		{"set and remove", id, social.ProfileUpdate{Avatar: picture(id, "x", 48), RemoveAvatar: true}, social.BadUserInput},
		{"unknown user", "999999", social.ProfileUpdate{DisplayName: str("x")}, social.NotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ps.UpdateProfile(ctx, tc.user, tc.update); social.ErrorCode(err) != tc.code {
				t.Fatalf("UpdateProfile = %v, want %s", err, tc.code)
			}
			after, err := rdb.HGetAll(ctx, s.Keys().User(id)).Result()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(after, before) {
				t.Errorf("a refused update changed the profile: %v, was %v", after, before)
			}
			if n, _ := rdb.Exists(ctx, s.Keys().User("999999")).Result(); n != 0 {
				t.Error("an update of an unknown user made a profile")
			}
		})
	}
}

// TestRemoveFollower: the follow ends, the counts follow, the viewer's
// posts leave the follower's home list, and no block is made.
func TestRemoveFollower(t *testing.T) {
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			s, rdb := feedStore(t, feedConfig(mode))
			w := feedWorker(t, s, rdb)
			ctx := context.Background()
			u := feedUsers(t, s, 3)
			me, fan, other := u[0], u[1], u[2]
			feedOK(t, s.Follow(ctx, fan, me))
			feedOK(t, s.Follow(ctx, fan, other))
			mine := feedPost(t, s, me, social.NewPost{}).ID
			theirs := feedPost(t, s, other, social.NewPost{}).ID
			drain(t, w)
			if got := home(t, s, fan, 5); !slices.Equal(got, []string{theirs, mine}) {
				t.Fatalf("home before = %v", got)
			}
			feedOK(t, s.RemoveFollower(ctx, me, fan))
			feedOK(t, s.RemoveFollower(ctx, me, fan)) // idempotent
			drain(t, w)
			wantLists(t, s, me, nil, nil)
			wantLists(t, s, fan, nil, []string{other})
			if got := home(t, s, fan, 5); !slices.Equal(got, []string{theirs}) {
				t.Errorf("home after = %v, want %v", got, []string{theirs})
			}
			list, err := rdb.LRange(ctx, s.Keys().Home(fan), 0, -1).Result()
			feedOK(t, err)
			if slices.Contains(list, mine+":"+me) {
				t.Errorf("the post is still in the home list: %v", list)
			}
			rel, err := s.Relations(ctx, me, []string{fan})
			feedOK(t, err)
			if rel[0] != (social.Relation{}) {
				t.Errorf("relation after = %+v, want none (no block)", rel[0])
			}
			feedOK(t, s.Follow(ctx, fan, me)) // not blocked: may follow again
			wantGraphCode(t, s.RemoveFollower(ctx, me, me), social.BadUserInput)
			wantGraphCode(t, s.RemoveFollower(ctx, me, "999999"), social.NotFound)
		})
	}
}
