package mediatest

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"testing"
)

// Secret is the marker the metadata built here carries, for tests to
// look for in what is stored: a place a photo was taken.
const Secret = "GPS-SECRET-48.85"

// jpegSegment is a JPEG marker segment holding payload.
func jpegSegment(marker byte, payload string) []byte {
	s := []byte{0xff, marker, 0, 0}
	binary.BigEndian.PutUint16(s[2:], uint16(len(payload)+2))
	return append(s, payload...)
}

// exifGPS is an APP1 EXIF payload whose GPS IFD names a place.
func exifGPS() string {
	return "Exif\x00\x00MM\x00\x2a\x00\x00\x00\x08GPSLatitude " + Secret
}

func encodeJPEG(tb testing.TB, w, h int) []byte {
	tb.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, picture(w, h), nil); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// JPEGMPF is what a phone writes for a photo with a depth map or a
// preview: a w×h JPEG with EXIF, XMP, an MPF index (APP2), an IPTC block
// (APP13) and comments before its tables, between them and before its
// EOI, then a second whole JPEG, after the first's EOI, that carries
// GPS EXIF of its own.
func JPEGMPF(tb testing.TB, w, h int) []byte {
	tb.Helper()
	src := encodeJPEG(tb, w, h)
	sof := bytes.Index(src, []byte{0xff, 0xc0})
	eoi := len(src) - 2
	var out []byte
	out = append(out, src[:2]...)
	out = append(out, jpegSegment(0xe1, exifGPS())...)
	out = append(out, jpegSegment(0xe1, "http://ns.adobe.com/xap/1.0/\x00<x:xmpmeta>"+Secret+"</x:xmpmeta>")...)
	out = append(out, jpegSegment(0xe2, "MPF\x00MM\x00\x2a "+Secret)...)
	out = append(out, jpegSegment(0xed, "Photoshop 3.0\x008BIM\x04\x04 "+Secret)...)
	out = append(out, src[2:sof]...)
	out = append(out, jpegSegment(0xfe, "taken at "+Secret)...)
	out = append(out, jpegSegment(0xe9, "APP9 "+Secret)...)
	out = append(out, src[sof:eoi]...)
	out = append(out, jpegSegment(0xfe, "after the scan "+Secret)...)
	out = append(out, src[eoi:]...)
	second := JPEGWithGPS(tb, 8, 8)
	second = append(second[:2], append(jpegSegment(0xe1, exifGPS()), second[2:]...)...)
	return append(out, second...)
}

// JPEGWithKept is a w×h JPEG with the segments a stored copy keeps
// besides the tables: JFIF with a thumbnail (which is dropped), Adobe,
// and an ICC profile.
func JPEGWithKept(tb testing.TB, w, h int) []byte {
	tb.Helper()
	src := encodeJPEG(tb, w, h)
	jfif := "JFIF\x00\x01\x02\x00\x00\x01\x00\x01\x01\x06" + Secret + "!!" // a 1×6 thumbnail
	var out []byte
	out = append(out, src[:2]...)
	out = append(out, jpegSegment(0xe0, jfif)...)
	out = append(out, jpegSegment(0xe2, "ICC_PROFILE\x00\x01\x01fake profile")...)
	out = append(out, jpegSegment(0xee, "Adobe\x00\x64\x00\x00\x00\x00\x01")...)
	return append(out, src[2:]...)
}

// PNGWithPrivate is a w×h PNG with a private chunk (gpSx, as a camera
// app writes), text (tEXt, zTXt, iTXt with XMP), eXIf and tIME chunks
// before and between its data, the kept gAMA and sRGB chunks, and bytes
// after IEND.
func PNGWithPrivate(tb testing.TB, w, h int) []byte {
	tb.Helper()
	var b bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.NoCompression}
	if err := enc.Encode(&b, picture(w, h)); err != nil {
		tb.Fatal(err)
	}
	src := b.Bytes()
	ihdrEnd := 8 + 12 + 13
	idat := bytes.Index(src, []byte("IDAT")) - 4
	var out []byte
	out = append(out, src[:ihdrEnd]...)
	out = append(out, pngChunk("gAMA", []byte{0, 0, 0xb1, 0x8f})...)
	out = append(out, pngChunk("sRGB", []byte{0})...)
	out = append(out, pngChunk("gpSx", []byte(Secret))...)
	out = append(out, pngChunk("tEXt", []byte("Location\x00"+Secret))...)
	out = append(out, pngChunk("iTXt", []byte("XML:com.adobe.xmp\x00\x00\x00\x00\x00<x:xmpmeta>"+Secret+"</x:xmpmeta>"))...)
	out = append(out, pngChunk("eXIf", []byte("MM\x00\x2a"+Secret))...)
	out = append(out, pngChunk("tIME", []byte{0x07, 0xea, 11, 28, 12, 0, 0})...)
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	_, _ = zw.Write([]byte(Secret))
	_ = zw.Close()
	out = append(out, src[ihdrEnd:idat]...)
	out = append(out, pngChunk("zTXt", append([]byte("Comment\x00\x00"), z.Bytes()...))...)
	out = append(out, src[idat:]...)
	return append(out, Secret...)
}

// PNGCorrupt is a w×h greyscale PNG whose chunks are whole (CRCs right)
// but whose IDAT holds a damaged zlib stream: its header decodes, its
// pixels do not.
func PNGCorrupt(w, h uint32) []byte {
	ihdr := binary.BigEndian.AppendUint32(nil, w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	ihdr = append(ihdr, 8, 0, 0, 0, 0)
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	_, _ = zw.Write(make([]byte, 4096))
	_ = zw.Close()
	data := z.Bytes()
	for i := 2; i < len(data)-4; i++ {
		data[i] ^= 0x5a
	}
	out := append([]byte("\x89PNG\r\n\x1a\n"), pngChunk("IHDR", ihdr)...)
	out = append(out, pngChunk("IDAT", data)...)
	return append(out, pngChunk("IEND", nil)...)
}

// gifBlocks are data sub-blocks holding s, and their terminator.
func gifBlocks(s string) []byte {
	var out []byte
	for len(s) > 0 {
		n := min(len(s), 255)
		out = append(append(out, byte(n)), s[:n]...)
		s = s[n:]
	}
	return append(out, 0)
}

// GIFWithComments is a w×h animated GIF of two frames with a comment,
// an XMP application extension and a plain text extension before its
// frames, another comment between them, and bytes after its trailer.
func GIFWithComments(tb testing.TB, w, h int) []byte {
	tb.Helper()
	pal := color.Palette{color.Black, color.White}
	frames := []*image.Paletted{image.NewPaletted(image.Rect(0, 0, w, h), pal), image.NewPaletted(image.Rect(0, 0, w, h), pal)}
	frames[1].SetColorIndex(0, 0, 1)
	var b bytes.Buffer
	if err := gif.EncodeAll(&b, &gif.GIF{Image: frames, Delay: []int{10, 10}}); err != nil {
		tb.Fatal(err)
	}
	src := b.Bytes()
	start := 13
	if src[10]&0x80 != 0 {
		start += 3 << (src[10]&7 + 1)
	}
	second := start + 1 + bytes.Index(src[start+1:], []byte{0x21, 0xf9})
	var out []byte
	out = append(out, src[:start]...)
	out = append(out, append([]byte{0x21, 0xfe}, gifBlocks("taken at "+Secret)...)...)
	out = append(out, append([]byte{0x21, 0xff}, gifBlocks("XMP DataXMP")[:12]...)...)
	out = append(out, gifBlocks("<x:xmpmeta>"+Secret+"</x:xmpmeta>")...)
	out = append(out, append([]byte{0x21, 0x01}, gifBlocks("\x00\x00\x00\x00\x10\x00\x10\x00\x08\x08\x01\x00"+Secret)...)...)
	out = append(out, src[start:second]...)
	out = append(out, append([]byte{0x21, 0xfe}, gifBlocks(Secret)...)...)
	out = append(out, src[second:]...)
	return append(out, Secret...)
}
