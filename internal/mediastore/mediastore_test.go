package mediastore_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"

	"github.com/socialgw/gateway/internal/media/mediatest"
	"github.com/socialgw/gateway/internal/mediastore"
	"github.com/socialgw/gateway/internal/s3test"
	"github.com/socialgw/gateway/internal/social"
)

// buckets are the two kinds the gateway runs on: a local directory and
// S3 (a real S3 API served over HTTP).
func buckets(t *testing.T) map[string]func(t *testing.T) *blob.Bucket {
	s3 := s3test.Start(t)
	return map[string]func(t *testing.T) *blob.Bucket{
		"file": func(t *testing.T) *blob.Bucket {
			b, err := fileblob.OpenBucket(t.TempDir(), nil)
			if err != nil {
				t.Fatal(err)
			}
			return b
		},
		"s3": func(t *testing.T) *blob.Bucket { return s3.Bucket(t) },
	}
}

func TestSave(t *testing.T) {
	ctx := context.Background()
	for name, open := range buckets(t) {
		t.Run(name, func(t *testing.T) {
			s := mediastore.New(open(t))
			defer s.Close()
			jpg := mediatest.JPEGWithGPS(t, 32, 16)
			m, err := s.Save(ctx, bytes.NewReader(jpg), int64(len(jpg)))
			if err != nil {
				t.Fatal(err)
			}
			if m.Kind != social.Image || m.MIME != "image/jpeg" || m.Width != 32 || m.Height != 16 || m.Key == "" || m.ID == "" {
				t.Fatalf("Save = %+v", m)
			}
			r, err := s.Open(ctx, m.Key)
			if err != nil {
				t.Fatal(err)
			}
			stored, _ := io.ReadAll(r)
			r.Close()
			if int64(len(stored)) != m.Bytes || bytes.Contains(stored, []byte("Exif")) {
				t.Errorf("stored %d bytes (Bytes %d), EXIF kept: %v", len(stored), m.Bytes, bytes.Contains(stored, []byte("Exif")))
			}
			// A refused file leaves nothing.
			zip := []byte("PK\x03\x04 not media")
			if _, err := s.Save(ctx, bytes.NewReader(zip), int64(len(zip))); social.ErrorCode(err) != social.BadUserInput {
				t.Errorf("Save(zip) = %v, want BAD_USER_INPUT", err)
			}
			if keys, err := s.Keys(ctx); err != nil || len(keys) != 1 {
				t.Errorf("keys after a refusal = %v, %v; want the one saved", keys, err)
			}
			// Deleting twice is fine; the file is then gone.
			for range 2 {
				if err := s.Delete(ctx, []string{m.Key}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.Open(ctx, m.Key); social.ErrorCode(err) != social.NotFound {
				t.Errorf("Open after Delete = %v, want NOT_FOUND", err)
			}
		})
	}
}

// An export archive is written whole or not at all: a fill that fails
// leaves the earlier archive as it was, on both kinds of bucket.
func TestWriteExport(t *testing.T) {
	ctx := context.Background()
	for name, open := range buckets(t) {
		t.Run(name, func(t *testing.T) {
			s := mediastore.New(open(t))
			defer s.Close()
			read := func() string {
				t.Helper()
				r, err := s.OpenExport(ctx, "42")
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				b, _ := io.ReadAll(r)
				return string(b)
			}
			if _, err := s.OpenExport(ctx, "42"); social.ErrorCode(err) != social.NotFound {
				t.Fatalf("OpenExport before any = %v, want NOT_FOUND", err)
			}
			big := bytes.Repeat([]byte("x"), 6<<20) // more than one S3 part
			n, err := s.WriteExport(ctx, "42", func(w io.Writer) error { _, err := w.Write(big); return err })
			if err != nil || n != int64(len(big)) || read() != string(big) {
				t.Fatalf("WriteExport = %d, %v", n, err)
			}
			failed := errors.New("the account's data could not be read")
			_, err = s.WriteExport(ctx, "42", func(w io.Writer) error {
				_, _ = io.WriteString(w, "half an archive")
				return failed
			})
			if !errors.Is(err, failed) || read() != string(big) {
				t.Fatalf("a failed write: %v; the earlier archive kept: %v", err, read() == string(big))
			}
			if keys, _ := s.Keys(ctx); len(keys) != 0 {
				t.Errorf("archives listed among media files: %v", keys)
			}
		})
	}
}
