package redisstore

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/socialgw/gateway/internal/social"
)

// Files deletes the stored files of posts (internal/mediastore). The
// fan-out worker's delete job calls it, so a deletion that fails is
// retried with the job.
type Files interface {
	Delete(ctx context.Context, keys []string) error
}

// ProfileFiles deletes every profile picture of a user
// (internal/mediastore): the purge of a deleted account calls it.
type ProfileFiles interface {
	DeleteProfileFiles(ctx context.Context, userID string) error
}

// SetFiles gives the store the blob store of media files, whose files a
// post's deletion removes, and, when it can, a deleted account's profile
// pictures; without one they are left in place.
func (s *DB) SetFiles(f Files) {
	s.set.files = f
	s.set.profileFiles, _ = f.(ProfileFiles)
}

// storedMedia is one file of a post's media field: short names, as the
// field is read with every post.
type storedMedia struct {
	ID    string  `json:"id"`
	Kind  string  `json:"kind"`
	MIME  string  `json:"mime"`
	Bytes int64   `json:"bytes"`
	W     int     `json:"w,omitempty"`
	H     int     `json:"h,omitempty"`
	Dur   float64 `json:"dur,omitempty"`
	Alt   string  `json:"alt,omitempty"`
	Key   string  `json:"key"`
}

// encodeMedia is the media field of a post's hash.
func encodeMedia(files []social.Media) string {
	out := make([]storedMedia, len(files))
	for i, m := range files {
		out[i] = storedMedia{ID: m.ID, Kind: string(m.Kind), MIME: m.MIME, Bytes: m.Bytes, W: m.Width, H: m.Height,
			Dur: m.Duration, Alt: m.Alt, Key: m.Key}
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// decodeMedia reads a post's media field; a field that does not decode
// (never written so) reads as no media rather than failing the page.
func decodeMedia(v string) []social.Media {
	var in []storedMedia
	if json.Unmarshal([]byte(v), &in) != nil {
		return nil
	}
	out := make([]social.Media, len(in))
	for i, m := range in {
		out[i] = social.Media{ID: m.ID, Kind: social.MediaKind(m.Kind), MIME: m.MIME, Bytes: m.Bytes, Width: m.W, Height: m.H,
			Duration: m.Dur, Alt: m.Alt, Key: m.Key}
	}
	return out
}

// mediaKeys are the blob keys of a post's files, as a delete job carries
// them: separated by spaces (keys hold none).
func mediaKeys(files []social.Media) string {
	keys := make([]string, len(files))
	for i, m := range files {
		keys[i] = m.Key
	}
	return strings.Join(keys, " ")
}
