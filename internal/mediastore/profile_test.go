package mediastore_test

import (
	"bytes"
	"context"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"io"
	"slices"
	"testing"

	"gocloud.dev/blob/fileblob"

	"github.com/socialgw/gateway/internal/media/mediatest"
	"github.com/socialgw/gateway/internal/mediastore"
	"github.com/socialgw/gateway/internal/social"
)

func openFileStore(t *testing.T) *mediastore.Store {
	t.Helper()
	b, err := fileblob.OpenBucket(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := mediastore.New(b)
	t.Cleanup(func() { s.Close() })
	return s
}

// profileKeys lists the stored profile picture files.
func profileKeys(t *testing.T, s *mediastore.Store) []string {
	t.Helper()
	keys, err := s.ProfileFiles(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

func TestSaveProfileImage(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		role   social.ImageRole
		file   []byte
		sizes  [][2]int // each version's width and height
		origin string   // the original's type
	}{
		{"avatar from a wide JPEG", social.Avatar, mediatest.JPEGWithGPS(t, 640, 480),
			[][2]int{{48, 48}, {96, 96}, {400, 400}}, "image/jpeg"},
		{"small avatar is not enlarged", social.Avatar, mediatest.PNGWithText(t, 64, 80),
			[][2]int{{48, 48}, {64, 64}, {64, 64}}, "image/png"},
		{"header fitted to a width", social.Header, mediatest.JPEGWithGPS(t, 3000, 1000),
			[][2]int{{600, 200}, {1500, 500}}, "image/jpeg"},
		{"tall header fitted to its height", social.Header, mediatest.JPEGWithGPS(t, 400, 800),
			[][2]int{{300, 600}, {400, 800}}, "image/jpeg"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := openFileStore(t)
			img, err := s.SaveProfileImage(ctx, "7", tc.role, bytes.NewReader(tc.file), int64(len(tc.file)))
			if err != nil {
				t.Fatal(err)
			}
			if img.ID == "" || img.Original.MIME != tc.origin || len(img.Versions) != len(tc.sizes) {
				t.Fatalf("SaveProfileImage = %+v", img)
			}
			orig := read(t, s, img.Original.Key)
			if int64(len(orig)) != img.Original.Bytes || bytes.Contains(orig, []byte("GPSLatitude")) {
				t.Errorf("original: %d bytes stored (Bytes %d), secret kept: %v", len(orig), img.Original.Bytes, bytes.Contains(orig, []byte("GPSLatitude")))
			}
			for i, v := range img.Versions {
				data := read(t, s, v.Key)
				m, format, err := image.Decode(bytes.NewReader(data))
				if err != nil {
					t.Fatalf("version %d: %v", v.Size, err)
				}
				got := [2]int{m.Bounds().Dx(), m.Bounds().Dy()}
				if got != tc.sizes[i] || got != [2]int{v.Width, v.Height} || "image/"+format != v.MIME || int64(len(data)) != v.Bytes {
					t.Errorf("version %d: %v %s %d bytes, recorded %+v, want %v", v.Size, got, format, len(data), v, tc.sizes[i])
				}
			}
			if got, want := profileKeys(t, s), img.Keys(); !sameSet(got, want) {
				t.Errorf("stored %v, want %v", got, want)
			}
			if err := s.DeleteProfileImage(ctx, &img); err != nil {
				t.Fatal(err)
			}
			if got := profileKeys(t, s); len(got) != 0 {
				t.Errorf("after DeleteProfileImage: %v", got)
			}
		})
	}
}

func TestSaveProfileImageRefuses(t *testing.T) {
	ctx := context.Background()
	s := openFileStore(t)
	s.Profile = mediastore.ProfileBounds{MaxBytes: 4 << 10, MaxPixels: 1 << 20}
	big := mediatest.JPEGWithGPS(t, 400, 400)
	tests := []struct {
		name string
		file []byte
	}{
		{"not an image", []byte("PK\x03\x04 not media at all")},
		{"audio", mediatest.MP3(3, false)},
		{"too many bytes", append(big, make([]byte, 4<<10)...)},
		{"too many pixels", mediatest.PNGHeader(2000, 2000)},
		{"damaged", mediatest.PNGCorrupt(20, 20)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.SaveProfileImage(ctx, "7", social.Avatar, bytes.NewReader(tc.file), int64(len(tc.file)))
			if social.ErrorCode(err) != social.BadUserInput {
				t.Fatalf("SaveProfileImage = %v, want BAD_USER_INPUT", err)
			}
			if got := profileKeys(t, s); len(got) != 0 {
				t.Errorf("a refused picture left %v", got)
			}
		})
	}
}

func TestDeleteProfileFiles(t *testing.T) {
	ctx := context.Background()
	s := openFileStore(t)
	jpg := mediatest.JPEGWithGPS(t, 100, 100)
	for _, user := range []string{"7", "7", "70"} {
		if _, err := s.SaveProfileImage(ctx, user, social.Avatar, bytes.NewReader(jpg), int64(len(jpg))); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteProfileFiles(ctx, "7"); err != nil {
		t.Fatal(err)
	}
	got := profileKeys(t, s)
	if len(got) != 4 || slices.ContainsFunc(got, func(k string) bool { return !bytes.HasPrefix([]byte(k), []byte("profile/70/")) }) {
		t.Errorf("after DeleteProfileFiles(7): %v, want user 70's 4 files only", got)
	}
}

func read(t *testing.T, s *mediastore.Store, key string) []byte {
	t.Helper()
	r, err := s.Open(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
