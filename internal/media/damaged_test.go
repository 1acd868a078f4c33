package media_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/socialgw/gateway/internal/media"
	"github.com/socialgw/gateway/internal/media/mediatest"
	"github.com/socialgw/gateway/internal/social"
)

// cut returns b[:n] followed by tail.
func cut(b []byte, n int, tail ...byte) []byte {
	return append(append([]byte{}, b[:n]...), tail...)
}

// edit returns a copy of b with f applied.
func edit(b []byte, f func([]byte) []byte) []byte { return f(append([]byte{}, b...)) }

// TestDamagedRefused sends files whose headers are sound but whose
// content is not: each is refused with BAD_USER_INPUT, and only once its
// bytes have been read (Inspect alone passes it).
func TestDamagedRefused(t *testing.T) {
	jpg := mediatest.JPEGWithKept(t, 64, 64)
	scan := bytes.Index(jpg, []byte{0xff, 0xda})
	anim := mediatest.WebPAnimated(8, 4)
	frame := bytes.Index(anim, []byte("ANMF"))
	ogg := mediatest.OggOpusTagged(312, 2*48000+312, 100)
	gifFile := mediatest.GIFWithComments(t, 6, 5)
	opusEnd := mediatest.OggOpus(312, 1000) // its last page: 27 + 1 + 40 bytes
	tests := []struct {
		name string
		file []byte
	}{
		{"png 7000×7000 with a corrupt IDAT", mediatest.PNGCorrupt(7000, 7000)},
		{"png with a wrong CRC", edit(mediatest.PNGWithPrivate(t, 5, 7), func(b []byte) []byte {
			b[bytes.Index(b, []byte("IDAT"))+6] ^= 1
			return b
		})},
		{"png without IEND", cut(mediatest.PNGWithPrivate(t, 5, 7), 60)},
		{"jpeg cut in its scan", cut(jpg, scan+(len(jpg)-scan)/2)},
		{"jpeg cut in its scan, EOI appended", cut(jpg, scan+(len(jpg)-scan)/2, 0xff, 0xd9)},
		{"jpeg without a scan", cut(jpg, scan, 0xff, 0xd9)},
		{"webp header without pixels", edit(mediatest.WebPWithMetadata(3, 2), func(b []byte) []byte {
			i := bytes.Index(b, []byte("VP8L"))
			return append(b[:i+8+5], b[i+8+5+3:]...) // keep the 5-byte header, drop the codes
		})},
		{"webp frame outside the canvas", edit(anim, func(b []byte) []byte {
			b[frame+8] = 200 // x offset / 2
			return b
		})},
		{"webp frame that does not decode", edit(anim, func(b []byte) []byte {
			b[frame+8+16+8] = 0 // the VP8L signature
			return b
		})},
		{"gif cut in its frames", cut(gifFile, len(gifFile)-len(mediatest.Secret)-8)},
		{"gif with a frame outside the canvas", edit(gifFile, func(b []byte) []byte {
			b[bytes.LastIndexByte(b, 0x2c)+1] = 200 // the last frame's left
			return b
		})},
		{"ogg page with a wrong CRC", edit(ogg, func(b []byte) []byte {
			b[len(b)-1] ^= 1
			return b
		})},
		{"ogg with a second stream", append(append([]byte{}, ogg...), mediatest.OggOpus(312, 1000)...)},
		{"ogg cut short", cut(ogg, len(ogg)-10)},
		{"ogg page after the end of its stream", append(append([]byte{}, ogg...), opusEnd[len(opusEnd)-68:]...)},
		{"m4a with a movie fragment", append(mediatest.M4AWithMetadata(1000, 3500, false, false), 0, 0, 0, 8, 'm', 'o', 'o', 'f')},
		{"m4a with an offset outside its media data", edit(mediatest.M4AWithMetadata(1000, 3500, false, false), func(b []byte) []byte {
			i := bytes.Index(b, []byte("stco"))
			binary.BigEndian.PutUint32(b[i+12:], 3)
			return b
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := media.Inspect(bytes.NewReader(tt.file), int64(len(tt.file)), media.DefaultMaxPixels); err != nil {
				t.Fatalf("Inspect refuses it already: %v", err)
			}
			f, _, err := clean(t, tt.file)
			if social.ErrorCode(err) != social.BadUserInput {
				t.Fatalf("stored %+v, %v; want BAD_USER_INPUT", f, err)
			}
		})
	}
}

// TestAnimationPixelBudget refuses an animation whose frames together
// exceed the pixel limit, each frame being within it.
func TestAnimationPixelBudget(t *testing.T) {
	tests := []struct {
		name    string
		file    []byte
		max     int64
		refused bool
	}{
		{"webp of two 4×4 frames, 32 allowed", mediatest.WebPAnimated(8, 4), 32, false},
		{"webp of two 4×4 frames, 31 allowed", mediatest.WebPAnimated(8, 4), 31, true},
		{"gif of two 6×5 frames, 60 allowed", mediatest.GIFWithComments(t, 6, 5), 60, false},
		{"gif of two 6×5 frames, 59 allowed", mediatest.GIFWithComments(t, 6, 5), 59, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := media.Inspect(bytes.NewReader(tt.file), int64(len(tt.file)), media.DefaultMaxPixels)
			if err != nil {
				t.Fatal(err)
			}
			_, err = media.Clean(&bytes.Buffer{}, bytes.NewReader(tt.file), int64(len(tt.file)), f, tt.max)
			if refused := social.ErrorCode(err) == social.BadUserInput; refused != tt.refused || !refused && err != nil {
				t.Errorf("Clean = %v; want refused %v", err, tt.refused)
			}
		})
	}
}

type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

// TestStoreFailureIsNotTheClients keeps a failing write apart from a
// refused file: it is the server's error, not BAD_USER_INPUT.
func TestStoreFailureIsNotTheClients(t *testing.T) {
	broken := errors.New("bucket unreachable")
	for _, file := range [][]byte{mediatest.JPEGMPF(t, 16, 8), mediatest.PNGWithPrivate(t, 5, 7), mediatest.WebPAnimated(8, 4),
		mediatest.GIFWithComments(t, 6, 5)} {
		f, err := media.Inspect(bytes.NewReader(file), int64(len(file)), media.DefaultMaxPixels)
		if err != nil {
			t.Fatal(err)
		}
		_, err = media.Clean(failingWriter{broken}, bytes.NewReader(file), int64(len(file)), f, media.DefaultMaxPixels)
		if !errors.Is(err, broken) {
			t.Errorf("%s: Clean = %v, want the write's error", f.MIME, err)
		}
	}
}
