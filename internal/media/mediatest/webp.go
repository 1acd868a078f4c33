package mediatest

import "encoding/binary"

// bitWriter writes a bit stream least significant bit first, as VP8L
// reads it.
type bitWriter struct {
	b     []byte
	nbits uint
}

func (w *bitWriter) write(v uint32, n uint) {
	for i := range n {
		if w.nbits%8 == 0 {
			w.b = append(w.b, 0)
		}
		w.b[len(w.b)-1] |= byte(v>>i&1) << (w.nbits % 8)
		w.nbits++
	}
}

// VP8L is a lossless bitstream of a w×h image of one colour: five prefix
// codes of one symbol each, so each pixel takes no bits.
func VP8L(w, h int, argb [4]byte) []byte {
	var bw bitWriter
	bw.write(0x2f, 8)
	bw.write(uint32(w-1), 14)
	bw.write(uint32(h-1), 14)
	bw.write(1, 1)                                                      // alpha is used
	bw.write(0, 3)                                                      // version
	bw.write(0, 1)                                                      // no transform
	bw.write(0, 1)                                                      // no colour cache
	bw.write(0, 1)                                                      // no meta prefix codes
	for _, sym := range []byte{argb[2], argb[1], argb[3], argb[0], 0} { // green, red, blue, alpha, distance
		bw.write(1, 1) // simple code
		bw.write(0, 1) // one symbol
		bw.write(1, 1) // of 8 bits
		bw.write(uint32(sym), 8)
	}
	return bw.b
}

func vp8x(flags byte, w, h int) []byte {
	b := []byte{flags, 0, 0, 0}
	return append(b, byte(w-1), byte((w-1)>>8), byte((w-1)>>16), byte(h-1), byte((h-1)>>8), byte((h-1)>>16))
}

func riff(chunks ...[]byte) []byte {
	body := []byte("WEBP")
	for _, c := range chunks {
		body = append(body, c...)
	}
	return append(append([]byte("RIFF"), binary.LittleEndian.AppendUint32(nil, uint32(len(body)))...), body...)
}

// WebPWithMetadata is an extended WebP (VP8X announcing EXIF and XMP) of
// w×h, lossless pixels, EXIF and XMP chunks, an unknown chunk, a second
// bitstream, and bytes after the RIFF's end.
func WebPWithMetadata(w, h int) []byte {
	out := riff(
		riffChunk("VP8X", vp8x(0x08|0x04|0x10, w, h)),
		riffChunk("EXIF", []byte(exifGPS())),
		riffChunk("VP8L", VP8L(w, h, [4]byte{0xff, 0x20, 0x40, 0x60})),
		riffChunk("XMP ", []byte("<x:xmpmeta>"+Secret+"</x:xmpmeta>")),
		riffChunk("gpSx", []byte(Secret)),
		riffChunk("VP8L", []byte(Secret)), // a second bitstream, which no decoder reads
	)
	return append(out, Secret...)
}

// WebPAnimated is an animated WebP of w×h with two lossless frames of
// half its width (the second at the right half), each frame holding an
// unknown chunk too, and EXIF after the frames.
func WebPAnimated(w, h int) []byte {
	frame := func(x int, c byte) []byte {
		fw := w / 2
		hdr := []byte{byte(x / 2), byte(x / 2 >> 8), 0, 0, 0, 0}
		hdr = append(hdr, byte(fw-1), byte((fw-1)>>8), 0, byte(h-1), byte((h-1)>>8), 0)
		hdr = append(hdr, 100, 0, 0, 0) // 100 ms, no blending
		hdr = append(hdr, riffChunk("VP8L", VP8L(fw, h, [4]byte{0xff, c, c, c}))...)
		return riffChunk("ANMF", append(hdr, riffChunk("gpSx", []byte(Secret))...))
	}
	return riff(
		riffChunk("VP8X", vp8x(0x02|0x08|0x10, w, h)),
		riffChunk("ANIM", []byte{0, 0, 0, 0, 0, 0}),
		frame(0, 0x10),
		frame(w/2, 0xe0),
		riffChunk("EXIF", []byte(exifGPS())),
	)
}
