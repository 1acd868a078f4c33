package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"

	"github.com/socialgw/gateway/internal/mediastore"
)

// Media is where posts' files are kept, shared by the gateway (which
// stores and serves them) and the worker (whose delete jobs remove them).
type Media struct {
	// URL is a gocloud bucket URL (s3://bucket?region=…); Dir a local
	// directory. URL wins; neither: a temporary directory removed on
	// exit, like the embedded Redis's data.
	URL, Dir string
	// Sweep finds and deletes files no post names (MediaSweep).
	Sweep MediaSweep
}

// Settings binds the media storage settings.
func (m *Media) Settings() []Setting {
	return []Setting{
		String(&m.URL, "media-url", "MEDIA_URL", "", "bucket of posts' media files as a gocloud URL: s3://bucket?region=R&endpoint=https://host&use_path_style=true (credentials: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY), or file:///dir; wins over MEDIA_DIR"),
		String(&m.Dir, "media-dir", "MEDIA_DIR", "", "local directory of posts' media files (created if missing); empty with no MEDIA_URL: a temporary directory removed on exit"),
		Duration(&m.Sweep.Grace, "media-sweep-grace", "MEDIA_SWEEP_GRACE", "1h", "age under which the fan-out worker's sweep leaves a media file no post names (at least 5m: longer than any upload request)"),
		Duration(&m.Sweep.Every, "media-sweep-every", "MEDIA_SWEEP_EVERY", "1m", "how often the fan-out worker sweeps a page of the media bucket for files no post names (0: never)"),
		Int(&m.Sweep.Batch, "media-sweep-batch", "MEDIA_SWEEP_BATCH", "500", "media files one sweep lists and checks"),
	}
}

// Configured reports whether the files have a lasting place.
func (m *Media) Configured() bool { return m.URL != "" || m.Dir != "" }

// Open opens the bucket; close releases it (and removes a temporary
// directory).
func (m *Media) Open(ctx context.Context, log *slog.Logger) (store *mediastore.Store, close func(), err error) {
	u, cleanup := m.URL, func() {}
	if u == "" {
		dir := m.Dir
		if dir == "" {
			if dir, err = os.MkdirTemp("", "socialgw-media-"); err != nil {
				return nil, nil, fmt.Errorf("media directory: %w", err)
			}
			cleanup = func() { os.RemoveAll(dir) }
			log.Warn("media files are kept in a temporary directory and removed on exit: set MEDIA_DIR or MEDIA_URL", "dir", dir)
		}
		if dir, err = filepath.Abs(dir); err != nil {
			return nil, nil, fmt.Errorf("media directory: %w", err)
		}
		u = (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir), RawQuery: "create_dir=true"}).String()
	}
	s, err := mediastore.Open(ctx, u)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	return s, func() { s.Close(); cleanup() }, nil
}
