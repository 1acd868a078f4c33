package mediastore

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/socialgw/gateway/internal/social"
)

// keyPrefix is where every media file is stored in the bucket.
const keyPrefix = "media/"

// key is a new file's key: media/<author>-<seq>-<id> with a Stamp
// (social.StoredFile), media/<id> without one.
func (s *Store) key(ctx context.Context, id string) (string, error) {
	if s.Stamp == nil {
		return keyPrefix + id, nil
	}
	author, seq, err := s.Stamp(ctx)
	if err != nil {
		return "", fmt.Errorf("store media: %w", err)
	}
	return keyPrefix + author + "-" + strconv.FormatInt(seq, 10) + "-" + id, nil
}

// parseKey reads what a key records of its post; ok is false for a key
// without a stamp.
func parseKey(key string) (f social.StoredFile, ok bool) {
	parts := strings.Split(strings.TrimPrefix(key, keyPrefix), "-")
	if len(parts) != 3 || !social.IsID(parts[0]) {
		return f, false
	}
	seq, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil || seq < 0 {
		return f, false
	}
	return social.StoredFile{Key: key, Author: parts[0], Seq: seq}, true
}

// ViewerStamp is a Stamp for files uploaded by the signed-in viewer of
// the request (the post's author), with the post sequence that seq reads.
func ViewerStamp(seq func(context.Context) (int64, error)) func(context.Context) (string, int64, error) {
	return func(ctx context.Context) (string, int64, error) {
		v, err := social.RequireViewer(ctx)
		if err != nil {
			return "", 0, err
		}
		n, err := seq(ctx)
		return v.UserID, n, err
	}
}

// exportPrefix is where data exports' archives are stored, apart from
// media files (the sweep lists only keyPrefix).
const exportPrefix = "exports/"

// ExportKey is the key of userID's data export archive: one per account,
// which each new export replaces.
func ExportKey(userID string) string { return exportPrefix + userID + ".zip" }
