// Package mediatest builds small media files for tests: real images
// from the standard encoders with metadata spliced in, and minimal audio
// streams (MP3, ADTS, Ogg Opus, M4A) whose durations are known.
package mediatest

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math/bits"
	"testing"
)

func picture(w, h int) image.Image {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range m.Pix {
		m.Pix[i] = byte(i * 7)
	}
	m.Set(0, 0, color.White)
	return m
}

// JPEGWithGPS encodes a w×h JPEG and puts an APP1 EXIF segment with a
// GPS IFD right after its SOI marker.
func JPEGWithGPS(tb testing.TB, w, h int) []byte {
	tb.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, picture(w, h), nil); err != nil {
		tb.Fatal(err)
	}
	// TIFF header, IFD0 with one entry: GPSInfo (0x8825) → the GPS IFD.
	tiff := []byte("MM\x00\x2a\x00\x00\x00\x08")
	tiff = append(tiff, 0, 1, 0x88, 0x25, 0, 4, 0, 0, 0, 1, 0, 0, 0, 26, 0, 0, 0, 0)
	// GPS IFD: GPSLatitudeRef "N".
	tiff = append(tiff, 0, 1, 0, 1, 0, 2, 0, 0, 0, 2, 'N', 0, 0, 0, 0, 0, 0, 0)
	payload := append([]byte("Exif\x00\x00"), tiff...)
	payload = append(payload, "GPSLatitude 48.8584"...) // a readable marker for the test
	seg := []byte{0xff, 0xe1, 0, 0}
	binary.BigEndian.PutUint16(seg[2:], uint16(len(payload)+2))
	seg = append(seg, payload...)
	src := b.Bytes()
	return append(append(append([]byte{}, src[:2]...), seg...), src[2:]...)
}

func pngChunk(typ string, data []byte) []byte {
	c := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
	c = append(c, typ...)
	c = append(c, data...)
	return binary.BigEndian.AppendUint32(c, crc32.ChecksumIEEE(c[4:]))
}

// PNGWithText encodes a w×h PNG with a tEXt chunk after its header.
func PNGWithText(tb testing.TB, w, h int) []byte {
	tb.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, picture(w, h)); err != nil {
		tb.Fatal(err)
	}
	src := b.Bytes()
	ihdrEnd := 8 + 12 + 13
	out := append([]byte{}, src[:ihdrEnd]...)
	out = append(out, pngChunk("tEXt", []byte("Comment\x00GPSLatitude 48.8584"))...)
	return append(out, src[ihdrEnd:]...)
}

// PNGHeader is a PNG signature and an IHDR claiming w×h pixels, the rest
// missing: what a decompression bomb shows before its data.
func PNGHeader(w, h uint32) []byte {
	ihdr := binary.BigEndian.AppendUint32(nil, w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	ihdr = append(ihdr, 8, 2, 0, 0, 0)
	out := append([]byte("\x89PNG\r\n\x1a\n"), pngChunk("IHDR", ihdr)...)
	return append(out, pngChunk("IDAT", []byte{0x78, 0x9c})...)
}

func riffChunk(id string, data []byte) []byte {
	c := append([]byte(id), binary.LittleEndian.AppendUint32(nil, uint32(len(data)))...)
	c = append(c, data...)
	if len(data)%2 == 1 {
		c = append(c, 0)
	}
	return c
}

// mp3Frame is an MPEG-1 Layer III frame at 128 kbit/s, 44.1 kHz, stereo:
// 417 bytes.
func mp3Frame() []byte {
	f := make([]byte, 417)
	copy(f, []byte{0xff, 0xfb, 0x90, 0x00})
	return f
}

// MP3 is n frames, behind an ID3v2 tag when id3.
func MP3(n int, id3 bool) []byte {
	var out []byte
	if id3 {
		out = append([]byte("ID3\x04\x00\x00\x00\x00\x00\x0a"), make([]byte, 10)...)
	}
	out = append(out, MP3Frames(n)...)
	return append(out, "TAG"...)
}

// MP3Frames is n MPEG audio frames and nothing else: what an MP3 file is
// without its tags.
func MP3Frames(n int) []byte {
	var out []byte
	for range n {
		out = append(out, mp3Frame()...)
	}
	return out
}

// Personal strings the ID3 and APE tags below carry, for tests to look
// for in what is stored.
const (
	TagArtist  = "Jane Q. Listener"
	TagComment = "recorded at 12 Rue de la Paix"
)

// syncsafe writes n as ID3v2's 28-bit integer: 7 bits a byte.
func syncsafe(n int) []byte {
	return []byte{byte(n >> 21 & 0x7f), byte(n >> 14 & 0x7f), byte(n >> 7 & 0x7f), byte(n & 0x7f)}
}

// ID3v2 is an ID3v2.3 or v2.4 tag (version 3 or 4) with a title, an
// artist, a comment and an attached picture (a real PNG); footer adds
// v2.4's footer, as a tag appended after the audio has.
func ID3v2(tb testing.TB, version byte, footer bool) []byte {
	tb.Helper()
	var pic bytes.Buffer
	if err := png.Encode(&pic, picture(4, 4)); err != nil {
		tb.Fatal(err)
	}
	frame := func(id string, body []byte) []byte {
		size := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
		if version == 4 {
			size = syncsafe(len(body))
		}
		f := append([]byte(id), size...)
		return append(append(f, 0, 0), body...)
	}
	var frames []byte
	frames = append(frames, frame("TIT2", []byte("\x03Morning walk"))...)
	frames = append(frames, frame("TPE1", []byte("\x03"+TagArtist))...)
	frames = append(frames, frame("COMM", []byte("\x03eng\x00"+TagComment))...)
	frames = append(frames, frame("APIC", append([]byte("\x03image/png\x00\x03\x00"), pic.Bytes()...))...)
	flags := byte(0)
	if footer {
		flags = 0x10
	}
	head := append([]byte{'I', 'D', '3', version, 0, flags}, syncsafe(len(frames))...)
	out := append(head, frames...)
	if footer {
		out = append(out, append([]byte{'3', 'D', 'I', version, 0, flags}, syncsafe(len(frames))...)...)
	}
	return out
}

// ID3v1 is a 128-byte ID3v1.1 tag, as found at the end of a file.
func ID3v1() []byte {
	field := func(s string, n int) []byte { return append([]byte(s), make([]byte, n-len(s))...) }
	out := []byte("TAG")
	out = append(out, field("Morning walk", 30)...)
	out = append(out, field(TagArtist, 30)...)
	out = append(out, field("", 30)...)
	out = append(out, "2026"...)
	out = append(out, field(TagComment[:28], 28)...)
	return append(out, 0, 1, 12) // v1.1: a zero, the track, the genre
}

// APEv2 is an APEv2 tag with a header, one Artist item and a footer, as
// some encoders append after the audio.
func APEv2() []byte {
	item := binary.LittleEndian.AppendUint32(nil, uint32(len(TagArtist)))
	item = append(append(item, 0, 0, 0, 0), "Artist\x00"+TagArtist...)
	hdr := func(flags uint32) []byte {
		h := append([]byte("APETAGEX"), binary.LittleEndian.AppendUint32(nil, 2000)...)
		h = binary.LittleEndian.AppendUint32(h, uint32(len(item)+32))
		h = binary.LittleEndian.AppendUint32(h, 1)
		h = binary.LittleEndian.AppendUint32(h, flags)
		return append(h, make([]byte, 8)...)
	}
	out := append(hdr(0xa0000000), item...)
	return append(out, hdr(0x80000000)...)
}

// MP3Xing is a VBR file whose first frame's Xing header counts frames
// (only three are present: the header is what is read).
func MP3Xing(frames uint32) []byte {
	first := mp3Frame()
	copy(first[4+32:], "Xing")
	binary.BigEndian.PutUint32(first[4+32+4:], 1)
	binary.BigEndian.PutUint32(first[4+32+8:], frames)
	return append(first, MP3(2, false)...)
}

// ADTS is n AAC-LC frames of 100 bytes at 44.1 kHz.
func ADTS(n int) []byte {
	var out []byte
	for range n {
		f := make([]byte, 100)
		copy(f, []byte{0xff, 0xf1, 0x50, 0x80, byte(100 >> 3), byte(100&7)<<5 | 0x1f, 0xfc})
		out = append(out, f...)
	}
	return out
}

func oggPage(typ byte, granule uint64, seq uint32, packet []byte) []byte {
	p := []byte("OggS\x00")
	p = append(p, typ)
	p = binary.LittleEndian.AppendUint64(p, granule)
	p = binary.LittleEndian.AppendUint32(p, 1234) // serial
	p = binary.LittleEndian.AppendUint32(p, seq)
	p = append(p, 0, 0, 0, 0, 1, byte(len(packet))) // CRC, one segment
	p = append(p, packet...)
	binary.LittleEndian.PutUint32(p[22:], OggCRC(p))
	return p
}

// OggCRC is an Ogg page's CRC-32 (polynomial 0x04c11db7, not reflected,
// initial value 0, no final xor) over the page with its CRC field zero,
// computed here with hash/crc32's reflected table on bit-reversed bytes.
func OggCRC(page []byte) uint32 {
	rev := make([]byte, len(page))
	for i, b := range page {
		rev[i] = bits.Reverse8(b)
	}
	if len(rev) >= 26 {
		clear(rev[22:26])
	}
	return bits.Reverse32(^crc32.Update(^uint32(0), crc32.IEEETable, rev))
}

// OggOpus is an Ogg Opus stream: OpusHead with preSkip, OpusTags, and a
// last page at granule.
func OggOpus(preSkip uint16, granule uint64) []byte {
	head := append([]byte("OpusHead\x01\x02"), binary.LittleEndian.AppendUint16(nil, preSkip)...)
	head = append(head, binary.LittleEndian.AppendUint32(nil, 48000)...)
	head = append(head, 0, 0, 0)
	out := oggPage(2, 0, 0, head)
	out = append(out, oggPage(0, 0, 1, []byte("OpusTags\x00\x00\x00\x00\x00\x00\x00\x00"))...)
	out = append(out, oggPage(0, granule/2, 2, make([]byte, 40))...)
	return append(out, oggPage(4, granule, 3, make([]byte, 40))...)
}

func isoBox(typ string, payload ...[]byte) []byte {
	body := bytes.Join(payload, nil)
	return append(append(binary.BigEndian.AppendUint32(nil, uint32(8+len(body))), typ...), body...)
}

// M4A is an MP4 container with a movie header of duration/timescale
// seconds and one track of the handler given (soun, vide).
func M4A(timescale, duration uint32, handler string) []byte {
	mvhd := make([]byte, 100)
	binary.BigEndian.PutUint32(mvhd[12:], timescale)
	binary.BigEndian.PutUint32(mvhd[16:], duration)
	hdlr := append(make([]byte, 8), handler...)
	hdlr = append(hdlr, make([]byte, 13)...)
	trak := isoBox("trak", isoBox("mdia", isoBox("hdlr", hdlr)))
	ftyp := isoBox("ftyp", []byte("M4A \x00\x00\x00\x00M4A isom"))
	return append(ftyp, isoBox("moov", isoBox("mvhd", mvhd), trak)...)
}
