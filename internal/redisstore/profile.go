package redisstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// ProfileService edits profiles: the bio, the display name and the
// pictures (graph.ProfileStore). The profile hash is the one Users reads,
// so a page brings the new fields with each author in the HMGET it
// already sends.
type ProfileService struct {
	rdb  redis.UniversalClient
	keys Keys
	// set holds the profile cache, from which an edit drops its profile
	// so that its author reads it at once (other gateways' caches drop it
	// when Redis announces the write).
	set *settings
}

// NewProfileService returns the profile editor over db's client, keys
// and profile cache.
func NewProfileService(db *DB) *ProfileService {
	return &ProfileService{rdb: db.rdb, keys: db.keys, set: db.set}
}

// CheckProfile applies the rules of an update's text (social.
// CheckProfileUpdate), as UpdateProfile does first: the caller asks
// before it stores any picture.
func (s *ProfileService) CheckProfile(u *social.ProfileUpdate, newAvatar, newHeader bool) error {
	return social.CheckProfileUpdate(u, newAvatar, newHeader)
}

// UpdateProfile changes the fields u sets of userID's profile in one
// step and returns the pictures it replaced or removed, whose files the
// caller deletes. A missing user is NOT_FOUND; a refused update changes
// nothing.
func (s *ProfileService) UpdateProfile(ctx context.Context, userID string, u social.ProfileUpdate) ([]*social.ProfileImage, error) {
	if err := s.CheckProfile(&u, u.Avatar != nil, u.Header != nil); err != nil {
		return nil, err
	}
	args, err := profileChange(u)
	if err != nil || args == nil {
		return nil, err
	}
	key := s.keys.User(userID)
	// The display name's search entry moves with it (search.go).
	var oldName string
	if u.DisplayName != nil {
		n, err := s.rdb.HGet(ctx, key, profileRecord.name("dname")).Result()
		if err != nil && !isNil(err) {
			return nil, fmt.Errorf("read display name of %s: %w", userID, err)
		}
		oldName = n
	}
	// The lock in AuthorFlags, which visibility checks read, and the
	// profile's flag, which author windows read, in the order that never
	// shows more than both allow: a lock sets the author's flag first, an
	// unlock clears it last (a crash between leaves the account hidden,
	// not shown).
	if u.Locked != nil && *u.Locked {
		if err := setAuthorFlag(ctx, s.rdb, s.keys, userID, flagLocked, true); err != nil {
			return nil, fmt.Errorf("lock %s: %w", userID, err)
		}
	}
	old, err := updateProfileScript.Run(ctx, s.rdb, []string{key}, args...).StringSlice()
	s.set.profiles.Invalidate(key)
	if isNil(err) {
		if u.Locked != nil && *u.Locked {
			// No such account: the lock set above must not outlive it.
			if err := setAuthorFlag(ctx, s.rdb, s.keys, userID, flagLocked, false); err != nil {
				return nil, err
			}
		}
		return nil, social.Errorf(social.NotFound, "user %s not found", userID)
	}
	if err != nil {
		return nil, fmt.Errorf("update profile of %s: %w", userID, err)
	}
	if u.DisplayName != nil {
		if err := indexDisplayName(ctx, s.rdb, s.keys, userID, oldName, *u.DisplayName); err != nil {
			return nil, err
		}
	}
	if u.Locked != nil && !*u.Locked {
		if err := setAuthorFlag(ctx, s.rdb, s.keys, userID, flagLocked, false); err != nil {
			return nil, fmt.Errorf("unlock %s: %w", userID, err)
		}
	}

	var replaced []*social.ProfileImage
	for _, v := range old {
		if img := decodeProfileImage(v); img != nil {
			replaced = append(replaced, img)
		}
	}
	return replaced, nil
}

// ApprovePending approves every pending request to follow userID, a
// batch at a time: what an unlock does once UpdateProfile cleared the
// flag, so that no request can be added any more (graph_requests.go).
// A failure leaves the rest pending; calling it again goes on.
func (s *ProfileService) ApprovePending(ctx context.Context, userID string) error {
	g := &GraphService{rdb: s.rdb, keys: s.keys, set: s.set}
	if err := g.approveAll(ctx, userID); err != nil {
		return fmt.Errorf("unlock %s: %w", userID, err)
	}
	return nil
}

// storedImage is a profile picture as the profile hash keeps it (JSON).
type storedImage struct {
	ID       string       `json:"id"`
	Original storedFile   `json:"o"`
	Versions []storedFile `json:"v"`
}

type storedFile struct {
	Size  int    `json:"s,omitempty"`
	MIME  string `json:"m"`
	Bytes int64  `json:"b"`
	W     int    `json:"w"`
	H     int    `json:"h"`
	Key   string `json:"k"`
}

func toStoredFile(f social.ImageFile) storedFile {
	return storedFile{Size: f.Size, MIME: f.MIME, Bytes: f.Bytes, W: f.Width, H: f.Height, Key: f.Key}
}

func (f storedFile) file() social.ImageFile {
	return social.ImageFile{Size: f.Size, MIME: f.MIME, Bytes: f.Bytes, Width: f.W, Height: f.H, Key: f.Key}
}

// encodeProfileImage is a picture's field value.
func encodeProfileImage(img *social.ProfileImage) string {
	st := storedImage{ID: img.ID, Original: toStoredFile(img.Original)}
	for _, v := range img.Versions {
		st.Versions = append(st.Versions, toStoredFile(v))
	}
	b, _ := json.Marshal(st)
	return string(b)
}

// decodeProfileImage reads a picture's field; nil for none, and for a
// value that does not decode (never written so), which then reads as no
// picture rather than failing every page its user is on.
func decodeProfileImage(v string) *social.ProfileImage {
	var st storedImage
	if v == "" || json.Unmarshal([]byte(v), &st) != nil || st.ID == "" {
		return nil
	}
	img := &social.ProfileImage{ID: st.ID, Original: st.Original.file()}
	for _, f := range st.Versions {
		img.Versions = append(img.Versions, f.file())
	}
	return img
}

// profileImage is a profile picture field: written when set.
func profileImage[T any](at func(*T) **social.ProfileImage) codec[T] {
	return codec[T]{
		get: func(r *T) (string, bool) {
			if img := *at(r); img != nil {
				return encodeProfileImage(img), true
			}
			return "", false
		},
		set: func(r *T, v string, _ bool) { *at(r) = decodeProfileImage(v) },
	}
}

// profileChange is updateProfileScript's arguments for u: how many
// field/value pairs it sets, the pairs, then the fields it removes; nil
// when u changes nothing.
func profileChange(u social.ProfileUpdate) ([]any, error) {
	row := userRow{user: social.User{Avatar: u.Avatar, Header: u.Header}}
	var set, del []string
	change := func(name string, on, setIt bool) {
		switch {
		case on && setIt:
			set = append(set, name)
		case on:
			del = append(del, name)
		}
	}
	if u.Bio != nil {
		row.user.Bio = *u.Bio
		change("bio", true, true) // an empty bio is written empty, as registration writes it
	}
	if u.DisplayName != nil {
		row.user.DisplayName = *u.DisplayName
		change("dname", true, *u.DisplayName != "")
	}
	if u.Locked != nil {
		row.user.Locked = *u.Locked
		change("locked", true, *u.Locked)
	}
	change("avatar", u.Avatar != nil || u.RemoveAvatar, u.Avatar != nil)
	change("header", u.Header != nil || u.RemoveHeader, u.Header != nil)
	if len(set)+len(del) == 0 {
		return nil, nil
	}
	args := []any{0}
	if len(set) > 0 {
		pairs, err := profileRecord.update(&row, set)
		if err != nil {
			return nil, err
		}
		args = append([]any{len(pairs) / 2}, pairs...)
	}
	for _, n := range del {
		args = append(args, profileRecord.name(n))
	}
	return args, nil
}
