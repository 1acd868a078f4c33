package media_test

import (
	"bytes"
	"encoding/binary"
	"image"
	"math"
	"testing"

	"github.com/socialgw/gateway/internal/media"
	"github.com/socialgw/gateway/internal/media/mediatest"
	"github.com/socialgw/gateway/internal/social"
)

func TestInspect(t *testing.T) {
	tests := []struct {
		name     string
		file     []byte
		want     media.File
		refused  bool
		notAfter []string // byte strings the stored copy must not hold
	}{
		{name: "jpeg with GPS EXIF", file: mediatest.JPEGWithGPS(t, 16, 8), want: media.File{Kind: social.Image, MIME: "image/jpeg", Width: 16, Height: 8},
			notAfter: []string{"Exif", "GPS"}},
		{name: "png with text", file: mediatest.PNGWithText(t, 5, 7), want: media.File{Kind: social.Image, MIME: "image/png", Width: 5, Height: 7},
			notAfter: []string{"tEXt", "GPSLatitude"}},
		{name: "webp with EXIF and XMP", file: mediatest.WebPWithMetadata(3, 2), want: media.File{Kind: social.Image, MIME: "image/webp", Width: 3, Height: 2},
			notAfter: []string{"EXIF", "XMP ", "GPS"}},
		{name: "png bomb header", file: mediatest.PNGHeader(20000, 20000), refused: true},
		{name: "zip", file: []byte("PK\x03\x04\x14\x00\x00\x00\x08\x00 some zipped bytes"), refused: true},
		{name: "text", file: []byte("hello, world"), refused: true},
		{name: "jpeg cut short", file: mediatest.JPEGWithGPS(t, 16, 8)[:40], refused: true},
		{name: "mp3 cbr", file: mediatest.MP3(10, true), want: media.File{Kind: social.Audio, MIME: "audio/mpeg", Duration: 10 * 1152 / 44100.0},
			notAfter: []string{"ID3", "TAG"}},
		{name: "mp3 xing", file: mediatest.MP3Xing(250), want: media.File{Kind: social.Audio, MIME: "audio/mpeg", Duration: 250 * 1152 / 44100.0}},
		{name: "adts aac", file: mediatest.ADTS(43), want: media.File{Kind: social.Audio, MIME: "audio/aac", Duration: 43 * 1024 / 44100.0}},
		{name: "ogg opus", file: mediatest.OggOpus(312, 2*48000+312), want: media.File{Kind: social.Audio, MIME: "audio/ogg", Duration: 2}},
		{name: "m4a", file: mediatest.M4A(1000, 3500, "soun"), want: media.File{Kind: social.Audio, MIME: "audio/mp4", Duration: 3.5}},
		{name: "mp4 video", file: mediatest.M4A(1000, 3500, "vide"), refused: true},
		{name: "ogg without opus", file: append([]byte("OggS"), make([]byte, 60)...), refused: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := bytes.NewReader(tt.file)
			got, err := media.Inspect(r, int64(len(tt.file)), media.DefaultMaxPixels)
			if tt.refused {
				if social.ErrorCode(err) != social.BadUserInput {
					t.Fatalf("Inspect = %+v, %v; want BAD_USER_INPUT", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got.Duration-tt.want.Duration) > 1e-9 {
				t.Errorf("duration %v, want %v", got.Duration, tt.want.Duration)
			}
			got.Duration, tt.want.Duration = 0, 0
			if got != tt.want {
				t.Errorf("Inspect = %+v, want %+v", got, tt.want)
			}
			var out bytes.Buffer
			n, err := media.Clean(&out, r, int64(len(tt.file)), got, media.DefaultMaxPixels)
			if err != nil || n != int64(out.Len()) {
				t.Fatalf("Clean = %d, %v (wrote %d)", n, err, out.Len())
			}
			for _, s := range tt.notAfter {
				if bytes.Contains(out.Bytes(), []byte(s)) {
					t.Errorf("the stored copy still holds %q", s)
				}
			}
			// The copy is still the same picture.
			again, err := media.Inspect(bytes.NewReader(out.Bytes()), int64(out.Len()), media.DefaultMaxPixels)
			if err != nil || again.Width != got.Width || again.Height != got.Height || again.MIME != got.MIME {
				t.Errorf("the stored copy inspects as %+v, %v", again, err)
			}
			if got.Kind == social.Image && got.MIME != "image/webp" {
				if _, _, err := image.Decode(bytes.NewReader(out.Bytes())); err != nil {
					t.Errorf("the stored copy does not decode: %v", err)
				}
			}
			if tt.name == "webp with EXIF and XMP" {
				b := out.Bytes()
				if size := binary.LittleEndian.Uint32(b[4:]); int(size) != len(b)-8 {
					t.Errorf("RIFF size %d, want %d", size, len(b)-8)
				}
				if b[20]&0x0c != 0 {
					t.Errorf("VP8X still announces EXIF or XMP: flags %#x", b[20])
				}
			}
		})
	}
}

// TestMP3TagsStripped stores tagged MP3 files built here (ID3v2.3 and
// v2.4 with a title, an artist, a comment and a picture; ID3v1; APEv2;
// an appended ID3v2.4 with its footer) and checks that what is stored is
// exactly their frames, with the duration of the file sent.
func TestMP3TagsStripped(t *testing.T) {
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	frames := mediatest.MP3Frames(20)
	xing := mediatest.MP3Xing(250)
	xing = xing[:len(xing)-len("TAG")] // MP3Xing ends in a bare "TAG"
	const cbr = 20 * 1152 / 44100.0
	tests := []struct {
		name     string
		file     []byte
		stored   []byte
		duration float64
	}{
		{"untagged", frames, frames, cbr},
		{"id3v2.3 in front", cat(mediatest.ID3v2(t, 3, false), frames), frames, cbr},
		{"id3v2.4 in front", cat(mediatest.ID3v2(t, 4, false), frames), frames, cbr},
		{"two id3v2 tags in front", cat(mediatest.ID3v2(t, 3, false), mediatest.ID3v2(t, 4, true), frames), frames, cbr},
		{"id3v1 behind", cat(frames, mediatest.ID3v1()), frames, cbr},
		{"id3v2 in front, ape and id3v1 behind", cat(mediatest.ID3v2(t, 4, false), frames, mediatest.APEv2(), mediatest.ID3v1()), frames, cbr},
		{"id3v2.4 appended with footer", cat(frames, mediatest.ID3v2(t, 4, true)), frames, cbr},
		{"vbr with xing, tagged both ends", cat(mediatest.ID3v2(t, 3, false), xing, mediatest.ID3v1()), xing, 250 * 1152 / 44100.0},
		{"last frame cut short", cat(mediatest.ID3v2(t, 3, false), frames, frames[:100], mediatest.ID3v1()), frames, cbr},
	}
	personal := []string{"ID3", "3DI", "TAG", "APETAGEX", mediatest.TagArtist, "Morning walk", "recorded at", "IHDR"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := media.Inspect(bytes.NewReader(tt.file), int64(len(tt.file)), media.DefaultMaxPixels)
			if err != nil || got.MIME != "audio/mpeg" || math.Abs(got.Duration-tt.duration) > 1e-9 {
				t.Fatalf("Inspect = %+v, %v; want audio/mpeg of %v s", got, err, tt.duration)
			}
			var out bytes.Buffer
			n, err := media.Clean(&out, bytes.NewReader(tt.file), int64(len(tt.file)), got, media.DefaultMaxPixels)
			if err != nil || n != int64(out.Len()) {
				t.Fatalf("Clean = %d, %v (wrote %d)", n, err, out.Len())
			}
			if !bytes.Equal(out.Bytes(), tt.stored) {
				t.Errorf("stored %d bytes, want the %d bytes of the frames", out.Len(), len(tt.stored))
			}
			for _, s := range personal {
				if bytes.Contains(out.Bytes(), []byte(s)) {
					t.Errorf("the stored copy still holds %q", s)
				}
			}
			again, err := media.Inspect(bytes.NewReader(out.Bytes()), int64(out.Len()), media.DefaultMaxPixels)
			if err != nil || math.Abs(again.Duration-tt.duration) > 1e-9 {
				t.Errorf("the stored copy inspects as %+v, %v", again, err)
			}
		})
	}
}
