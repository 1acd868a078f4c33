package media

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
)

// duration reads an audio file's length in seconds from its own
// structure: MP3 frame headers (or the Xing/Info or VBRI header a VBR
// encoder writes), the last Ogg page's granule position, an M4A's movie
// header, or the count of ADTS frames.
func duration(r io.ReaderAt, size int64, mime string) (float64, error) {
	var d float64
	var ok bool
	switch mime {
	case mimeMP3:
		d, ok = mp3Duration(r, size)
	case mimeAAC:
		d, ok = adtsDuration(r, size)
	case mimeOgg:
		d, ok = opusDuration(r, size)
	case mimeM4A:
		d, ok = m4aDuration(r, size)
	}
	if !ok || d <= 0 {
		return 0, refuse("looks like " + mime + " audio but its duration cannot be read (Ogg must hold Opus; M4A must hold sound and no video)")
	}
	return d, nil
}

// MPEG audio tables, by version (0: MPEG-1, 1: MPEG-2 and 2.5) and layer
// (0: I, 1: II, 2: III), in kbit/s.
var mp3Bitrates = [2][3][15]int{
	{
		{0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448},
		{0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384},
		{0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320},
	},
	{
		{0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256},
		{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160},
		{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160},
	},
}

// MPEG audio sampling rates by version bits (3: MPEG-1, 2: MPEG-2, 0:
// MPEG-2.5) and index.
var mp3Rates = [4][3]int{0: {11025, 12000, 8000}, 2: {22050, 24000, 16000}, 3: {44100, 48000, 32000}}

// mp3Frame is one MPEG audio frame header.
type mp3Frame struct {
	length, samples, rate int
	mpeg1, mono           bool
}

// parseMP3Frame reads a frame header; ok is false for anything else.
func parseMP3Frame(h []byte) (f mp3Frame, ok bool) {
	if len(h) < 4 || h[0] != 0xff || h[1]&0xe0 != 0xe0 {
		return f, false
	}
	ver, layer := (h[1]>>3)&3, (h[1]>>1)&3
	bi, si, pad := int(h[2]>>4), int(h[2]>>2)&3, int(h[2]>>1)&1
	if ver == 1 || layer == 0 || bi == 0 || bi == 15 || si == 3 {
		return f, false
	}
	f.rate = mp3Rates[ver][si]
	f.mpeg1 = ver == 3
	v := 1
	if f.mpeg1 {
		v = 0
	}
	l := 3 - int(layer) // 0: I, 1: II, 2: III
	br := mp3Bitrates[v][l][bi] * 1000
	switch {
	case l == 0:
		f.samples = 384
		f.length = (12*br/f.rate + pad) * 4
	case l == 2 && !f.mpeg1:
		f.samples = 576
		f.length = 72*br/f.rate + pad
	default:
		f.samples = 1152
		f.length = 144*br/f.rate + pad
	}
	f.mono = h[3]>>6 == 3
	return f, f.length > 4
}

// mp3Duration reads the frame count of a Xing/Info or VBRI header when
// the first frame (after any ID3v2 tags) holds one, or counts the frames.
func mp3Duration(r io.ReaderAt, size int64) (float64, bool) {
	off := mp3Start(r, size)
	first := make([]byte, 200)
	n, _ := r.ReadAt(first, off)
	f, ok := parseMP3Frame(first[:n])
	if !ok {
		return 0, false
	}
	side := 17 // side information after the header, then a Xing header
	switch {
	case f.mpeg1 && !f.mono:
		side = 32
	case !f.mpeg1 && f.mono:
		side = 9
	}
	if x := 4 + side; n >= x+12 && (string(first[x:x+4]) == "Xing" || string(first[x:x+4]) == "Info") &&
		binary.BigEndian.Uint32(first[x+4:])&1 != 0 {
		frames := binary.BigEndian.Uint32(first[x+8:])
		return float64(frames) * float64(f.samples) / float64(f.rate), frames > 0
	}
	if n >= 36+18 && string(first[36:40]) == "VBRI" {
		frames := binary.BigEndian.Uint32(first[36+14:])
		return float64(frames) * float64(f.samples) / float64(f.rate), frames > 0
	}
	samples, _ := mp3Walk(r, off, size)
	if samples == 0 {
		return 0, false
	}
	return float64(samples) / float64(f.rate), true
}

// mp3Start is where an MP3's first frame should be: after the ID3v2 tags
// in front of it (an encoder may write more than one).
func mp3Start(r io.ReaderAt, size int64) int64 {
	var off int64
	var id3 [10]byte
	for off+10 <= size {
		if _, err := r.ReadAt(id3[:], off); err != nil || string(id3[:3]) != "ID3" {
			break
		}
		n := int64(id3[6]&0x7f)<<21 | int64(id3[7]&0x7f)<<14 | int64(id3[8]&0x7f)<<7 | int64(id3[9]&0x7f)
		off += 10 + n
		if id3[5]&0x10 != 0 {
			off += 10 // footer
		}
	}
	return off
}

// mp3Walk follows the frames from off and returns the samples they hold
// and where the last whole one ends: at the first bytes that are not a
// frame (an ID3v1 or APE tag, an appended ID3v2 tag, trailing bytes) or
// at a last frame cut short, which is not counted.
func mp3Walk(r io.ReaderAt, off, size int64) (samples, end int64) {
	end = off
	br := bufio.NewReader(io.NewSectionReader(r, off, size-off))
	for {
		h, err := br.Peek(4)
		if err != nil {
			return samples, end
		}
		f, ok := parseMP3Frame(h)
		if !ok {
			return samples, end
		}
		if _, err := br.Discard(f.length); err != nil {
			return samples, end
		}
		samples += int64(f.samples)
		end += int64(f.length)
	}
}

// ADTS sampling frequencies by index.
var adtsRates = [...]int{96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350}

// adtsDuration counts the samples of an ADTS stream's frames.
func adtsDuration(r io.ReaderAt, size int64) (float64, bool) {
	samples, rate, _ := adtsWalk(r, size)
	if rate == 0 || samples == 0 {
		return 0, false
	}
	return float64(samples) / float64(rate), true
}

// adtsWalk follows an ADTS stream's frames from the start and returns
// the samples they hold, their rate and where the last whole one ends.
func adtsWalk(r io.ReaderAt, size int64) (samples int64, rate int, end int64) {
	br := bufio.NewReader(io.NewSectionReader(r, 0, size))
	for {
		h, err := br.Peek(7)
		if err != nil || h[0] != 0xff || h[1]&0xf6 != 0xf0 {
			break
		}
		si := int(h[2]>>2) & 0xf
		n := int(h[3]&3)<<11 | int(h[4])<<3 | int(h[5]>>5)
		if si >= len(adtsRates) || n < 7 {
			break
		}
		if rate == 0 {
			rate = adtsRates[si]
		}
		blocks := int64(h[6]&3 + 1)
		if _, err := br.Discard(n); err != nil {
			break
		}
		samples += 1024 * blocks
		end += int64(n)
	}
	return samples, rate, end
}

// cleanADTS copies an ADTS stream's whole frames, leaving out what
// follows them (an ID3 or APE tag, trailing bytes).
func cleanADTS(w io.Writer, r io.ReaderAt, size int64) error {
	_, _, end := adtsWalk(r, size)
	return copyRange(w, r, 0, end)
}

// opusDuration reads an Ogg Opus stream's length: the granule position of
// its last page, less the pre-skip of its OpusHead, at Opus's fixed 48
// kHz.
func opusDuration(r io.ReaderAt, size int64) (float64, bool) {
	head := make([]byte, 27+255+19)
	n, _ := r.ReadAt(head, 0)
	head = head[:n]
	if n < 27 {
		return 0, false
	}
	serial := binary.LittleEndian.Uint32(head[14:])
	data := 27 + int(head[26])
	if len(head) < data+19 || string(head[data:data+8]) != "OpusHead" {
		return 0, false
	}
	preSkip := int64(binary.LittleEndian.Uint16(head[data+10:]))
	// The last page starts within its maximal size (27 + 255 + 255·255
	// bytes) of the end.
	tailLen := min(size, 27+255+255*255)
	tail := make([]byte, tailLen)
	if _, err := r.ReadAt(tail, size-tailLen); err != nil && !errors.Is(err, io.EOF) {
		return 0, false
	}
	for i := bytes.LastIndex(tail, []byte("OggS")); i >= 0; i = bytes.LastIndex(tail[:i], []byte("OggS")) {
		if i+27 > len(tail) || binary.LittleEndian.Uint32(tail[i+14:]) != serial {
			continue
		}
		granule := int64(binary.LittleEndian.Uint64(tail[i+6:]))
		if granule <= preSkip {
			return 0, false
		}
		return float64(granule-preSkip) / 48000, true
	}
	return 0, false
}

// cleanMP3 copies an MP3's frames as they are (no re-encoding), leaving
// out the tags before and after them: ID3v2 in front, ID3v1, APE or an
// appended ID3v2 behind. What is stored is exactly the frames the
// duration was read from (or that a Xing header counts).
func cleanMP3(w io.Writer, r io.ReaderAt, size int64) error {
	start := mp3Start(r, size)
	_, end := mp3Walk(r, start, size)
	if end == start {
		return refuse("looks like MP3 audio but holds no whole frame")
	}
	return copyRange(w, r, start, end-start)
}
