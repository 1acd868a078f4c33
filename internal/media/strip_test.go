package media_test

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/gif"
	"math"
	"strings"
	"testing"

	"golang.org/x/image/webp"

	"github.com/socialgw/gateway/internal/media"
	"github.com/socialgw/gateway/internal/media/mediatest"
	"github.com/socialgw/gateway/internal/social"
)

// clean inspects and cleans a file as the store does, and returns what
// would be stored.
func clean(t *testing.T, file []byte) (media.File, []byte, error) {
	t.Helper()
	f, err := media.Inspect(bytes.NewReader(file), int64(len(file)), media.DefaultMaxPixels)
	if err != nil {
		return f, nil, err
	}
	var out bytes.Buffer
	n, err := media.Clean(&out, bytes.NewReader(file), int64(len(file)), f, media.DefaultMaxPixels)
	if err == nil && n != int64(out.Len()) {
		t.Fatalf("Clean counted %d bytes, wrote %d", n, out.Len())
	}
	return f, out.Bytes(), err
}

// TestMetadataStripped stores files built as cameras, phones and
// encoders write them, metadata everywhere it may sit, and checks that
// none of it is kept, that what is kept still decodes to the same
// picture or sound, and what each format must keep.
func TestMetadataStripped(t *testing.T) {
	tests := []struct {
		name  string
		file  []byte
		want  media.File
		keeps []string // byte strings the stored copy must still hold
		check func(t *testing.T, stored []byte)
	}{
		{name: "jpeg mpf with a second image", file: mediatest.JPEGMPF(t, 16, 8),
			want: media.File{Kind: social.Image, MIME: "image/jpeg", Width: 16, Height: 8}, check: oneJPEG},
		{name: "jpeg jfif, adobe, icc", file: mediatest.JPEGWithKept(t, 16, 8),
			want:  media.File{Kind: social.Image, MIME: "image/jpeg", Width: 16, Height: 8},
			keeps: []string{"JFIF\x00", "ICC_PROFILE\x00", "Adobe"}, check: noThumbnail},
		{name: "png private, text, exif, trailing", file: mediatest.PNGWithPrivate(t, 5, 7),
			want:  media.File{Kind: social.Image, MIME: "image/png", Width: 5, Height: 7},
			keeps: []string{"gAMA", "sRGB", "IEND"}, check: pngChunks},
		{name: "webp exif, xmp, unknown, trailing", file: mediatest.WebPWithMetadata(3, 2),
			want: media.File{Kind: social.Image, MIME: "image/webp", Width: 3, Height: 2}, check: webpHeader},
		{name: "webp animated", file: mediatest.WebPAnimated(8, 4),
			want: media.File{Kind: social.Image, MIME: "image/webp", Width: 8, Height: 4}, keeps: []string{"ANIM", "ANMF"}, check: webpHeader},
		{name: "gif comments, xmp, plain text, trailing", file: mediatest.GIFWithComments(t, 6, 5),
			want: media.File{Kind: social.Image, MIME: "image/gif", Width: 6, Height: 5}, keeps: []string{"NETSCAPE2.0"}, check: gifFrames},
		{name: "adts with a tag behind", file: append(mediatest.ADTS(43), "TAG"+mediatest.Secret...),
			want: media.File{Kind: social.Audio, MIME: "audio/aac", Duration: 43 * 1024 / 44100.0},
			check: func(t *testing.T, b []byte) {
				if !bytes.Equal(b, mediatest.ADTS(43)) {
					t.Errorf("stored %d bytes, want the frames'", len(b))
				}
			}},
		{name: "ogg opus comments on one page", file: mediatest.OggOpusTagged(312, 2*48000+312, 100),
			want: media.File{Kind: social.Audio, MIME: "audio/ogg", Duration: 2}, keeps: []string{mediatest.OggOpusVendor}, check: oggPages},
		{name: "ogg opus comments over pages", file: mediatest.OggOpusTagged(312, 2*48000+312, 200_000),
			want: media.File{Kind: social.Audio, MIME: "audio/ogg", Duration: 2}, keeps: []string{mediatest.OggOpusVendor}, check: oggPages},
		{name: "m4a udta, meta, uuid; mdat last", file: mediatest.M4AWithMetadata(1000, 3500, false, false),
			want: media.File{Kind: social.Audio, MIME: "audio/mp4", Duration: 3.5}, check: m4aOffsets},
		{name: "m4a udta, meta, uuid; mdat first", file: mediatest.M4AWithMetadata(1000, 3500, true, false),
			want: media.File{Kind: social.Audio, MIME: "audio/mp4", Duration: 3.5}, check: m4aOffsets},
		{name: "m4a co64", file: mediatest.M4AWithMetadata(1000, 3500, false, true),
			want: media.File{Kind: social.Audio, MIME: "audio/mp4", Duration: 3.5}, check: m4aOffsets},
	}
	personal := []string{mediatest.Secret, "Exif", "GPS", "xmpmeta", "Photoshop", "MPF", "Morning walk", "\xa9xyz", "udta", "tIME",
		"\xe3\xa1\xb2\xc3"} // the movie header's creation time
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !bytes.Contains(tt.file, []byte(mediatest.Secret)) {
				t.Fatal("the file sent holds no metadata to strip")
			}
			got, stored, err := clean(t, tt.file)
			if err != nil {
				t.Fatalf("stored %+v, %v", got, err)
			}
			for _, s := range personal {
				if i := bytes.Index(stored, []byte(s)); i >= 0 {
					t.Errorf("the stored copy still holds %q at %d", s, i)
				}
			}
			for _, s := range tt.keeps {
				if !bytes.Contains(stored, []byte(s)) {
					t.Errorf("the stored copy lost %q", s)
				}
			}
			again, err := media.Inspect(bytes.NewReader(stored), int64(len(stored)), media.DefaultMaxPixels)
			if err != nil || math.Abs(again.Duration-tt.want.Duration) > 1e-9 {
				t.Fatalf("the stored copy inspects as %+v, %v", again, err)
			}
			again.Duration, tt.want.Duration = 0, 0
			if again != tt.want {
				t.Errorf("the stored copy inspects as %+v, want %+v", again, tt.want)
			}
			if tt.want.Kind == social.Image {
				decodes(t, stored, tt.want)
			}
			if tt.check != nil {
				tt.check(t, stored)
			}
		})
	}
}

// decodes checks that a stored image decodes whole, to its size.
func decodes(t *testing.T, b []byte, want media.File) {
	t.Helper()
	var m image.Image
	var err error
	if want.MIME == "image/webp" && bytes.Contains(b, []byte("ANMF")) {
		return // x/image/webp decodes no animation; media decodes its frames
	}
	if want.MIME == "image/webp" {
		m, err = webp.Decode(bytes.NewReader(b))
	} else {
		m, _, err = image.Decode(bytes.NewReader(b))
	}
	if err != nil {
		t.Fatalf("the stored copy does not decode: %v", err)
	}
	if m.Bounds().Dx() != want.Width || m.Bounds().Dy() != want.Height {
		t.Errorf("the stored copy decodes to %v", m.Bounds())
	}
}

// oneJPEG checks that the stored JPEG is one image: one SOI, one EOI, at
// its end.
func oneJPEG(t *testing.T, b []byte) {
	t.Helper()
	if n := bytes.Count(b, []byte{0xff, 0xd8}); n != 1 {
		t.Errorf("%d SOI markers, want 1", n)
	}
	if !bytes.HasSuffix(b, []byte{0xff, 0xd9}) || bytes.Count(b, []byte{0xff, 0xd9}) != 1 {
		t.Errorf("the stored copy does not end at its only EOI")
	}
	for _, m := range []byte{0xe1, 0xe9, 0xed, 0xfe} {
		if bytes.Contains(b, []byte{0xff, m}) {
			t.Errorf("the stored copy holds marker %#x", m)
		}
	}
}

// noThumbnail checks that the stored JFIF header announces no thumbnail
// and holds none.
func noThumbnail(t *testing.T, b []byte) {
	t.Helper()
	i := bytes.Index(b, []byte("JFIF\x00"))
	if n := binary.BigEndian.Uint16(b[i-2:]); n != 16 || b[i+12] != 0 || b[i+13] != 0 {
		t.Errorf("JFIF segment of %d bytes, thumbnail %d×%d", n, b[i+12], b[i+13])
	}
}

// pngChunks checks that the stored PNG is only allowed chunks, ending
// at IEND.
func pngChunks(t *testing.T, b []byte) {
	t.Helper()
	allowed := "IHDR PLTE IDAT IEND tRNS gAMA cHRM sRGB iCCP"
	off := 8
	for off+12 <= len(b) {
		n, typ := int(binary.BigEndian.Uint32(b[off:])), string(b[off+4:off+8])
		if !strings.Contains(allowed, typ) {
			t.Errorf("the stored copy holds a %q chunk", typ)
		}
		off += 12 + n
	}
	if off != len(b) || !bytes.HasSuffix(b, []byte("IEND\xae\x42\x60\x82")) {
		t.Errorf("the stored copy does not end at IEND")
	}
}

// webpHeader checks the RIFF size and that VP8X announces no metadata.
func webpHeader(t *testing.T, b []byte) {
	t.Helper()
	if size := binary.LittleEndian.Uint32(b[4:]); int(size) != len(b)-8 {
		t.Errorf("RIFF size %d, want %d", size, len(b)-8)
	}
	if b[20]&0x0c != 0 {
		t.Errorf("VP8X still announces EXIF or XMP: flags %#x", b[20])
	}
}

// oggPages checks that the stored stream is whole pages with right
// CRCs and consecutive sequence numbers.
func oggPages(t *testing.T, b []byte) {
	t.Helper()
	for off, seq := 0, uint32(0); off < len(b); seq++ {
		if off+27 > len(b) || string(b[off:off+4]) != "OggS" {
			t.Fatalf("no page at %d", off)
		}
		nseg := int(b[off+26])
		n := 27 + nseg
		for _, l := range b[off+27 : off+27+nseg] {
			n += int(l)
		}
		page := b[off : off+n]
		if got, want := binary.LittleEndian.Uint32(page[22:]), mediatest.OggCRC(page); got != want {
			t.Errorf("page %d: CRC %#x, want %#x", seq, got, want)
		}
		if got := binary.LittleEndian.Uint32(page[18:]); got != seq {
			t.Errorf("page at %d: sequence %d, want %d", off, got, seq)
		}
		off += n
	}
}

// m4aOffsets checks that each chunk offset of the stored M4A points at
// its chunk.
func m4aOffsets(t *testing.T, b []byte) {
	t.Helper()
	i, width := bytes.Index(b, []byte("stco")), 4
	if i < 0 {
		i, width = bytes.Index(b, []byte("co64")), 8
	}
	count := int(binary.BigEndian.Uint32(b[i+8:]))
	if count != 3 {
		t.Fatalf("%d chunk offsets, want 3", count)
	}
	for k := range count {
		var o int
		if width == 4 {
			o = int(binary.BigEndian.Uint32(b[i+12+4*k:]))
		} else {
			o = int(binary.BigEndian.Uint64(b[i+12+8*k:]))
		}
		want := mediatest.M4ASample(k)
		if o+len(want) > len(b) || string(b[o:o+len(want)]) != want {
			t.Errorf("chunk %d's offset %d does not point at it", k, o)
		}
	}
}

// gifFrames checks that the stored GIF keeps its two frames and ends at
// its trailer.
func gifFrames(t *testing.T, b []byte) {
	t.Helper()
	g, err := gif.DecodeAll(bytes.NewReader(b))
	if err != nil || len(g.Image) != 2 {
		t.Fatalf("the stored GIF decodes to %v, %v", g, err)
	}
	if !bytes.HasSuffix(b, []byte{0x3b}) {
		t.Errorf("the stored GIF does not end at its trailer")
	}
}
