package media

import (
	"encoding/binary"
	"io"
)

// What a stored WebP keeps: a still image its extended header (VP8X),
// colour profile (ICCP), alpha (ALPH) and first bitstream (VP8, VP8L);
// an animation its extended header, colour profile, ANIM and ANMF
// frames, each frame only its alpha and first bitstream. EXIF, XMP,
// unknown chunks and whatever follows the bitstream the decoder reads
// are left out, so what is stored is what is decoded.
var (
	webpStill    = map[string]bool{"VP8X": true, "ICCP": true, "ALPH": true, "VP8 ": true, "VP8L": true}
	webpAnimated = map[string]bool{"VP8X": true, "ICCP": true, "ANIM": true, "ANMF": true}
	webpFrame    = map[string]bool{"ALPH": true, "VP8 ": true, "VP8L": true}
)

// The VP8X flags of metadata chunks, cleared in the stored copy.
const webpMetadataFlags = 0x08 | 0x04 // EXIF, XMP

// anmfHeader is the size of an ANMF frame's header before its chunks.
const anmfHeader = 16

// riffChunk is a chunk of a RIFF file: its id, where its payload lies in
// the file and, for an ANMF frame, the chunks kept inside it.
type riffChunk struct {
	id     string
	off, n int64 // payload
	frame  []riffChunk
}

// length is the chunk's payload length in the stored copy.
func (c riffChunk) length() int64 {
	if c.id != "ANMF" {
		return c.n
	}
	n := int64(anmfHeader)
	for _, f := range c.frame {
		n += f.size()
	}
	return n
}

// size is the chunk's size in the stored copy: header, payload, pad.
func (c riffChunk) size() int64 {
	n := c.length()
	return 8 + n + n&1
}

// riffChunks lists the chunks in r[off:end] that keep says are kept, up
// to the first bitstream (VP8, VP8L) when keep holds one. A last chunk
// that lacks its pad byte is accepted.
func riffChunks(r io.ReaderAt, off, end int64, keep map[string]bool) ([]riffChunk, error) {
	var kept []riffChunk
	var hdr [8]byte
	for off+8 <= end {
		if _, err := r.ReadAt(hdr[:], off); err != nil {
			return nil, badImage(mimeWebP)
		}
		c := riffChunk{id: string(hdr[:4]), off: off + 8, n: int64(binary.LittleEndian.Uint32(hdr[4:]))}
		if c.off+c.n > end {
			return nil, badImage(mimeWebP)
		}
		off = c.off + c.n + c.n&1
		if !keep[c.id] {
			continue
		}
		if c.id == "ANMF" {
			if c.n < anmfHeader {
				return nil, badImage(mimeWebP)
			}
			var err error
			if c.frame, err = riffChunks(r, c.off+anmfHeader, c.off+c.n, webpFrame); err != nil {
				return nil, err
			}
		}
		kept = append(kept, c)
		if c.id == "VP8 " || c.id == "VP8L" {
			break
		}
	}
	return kept, nil
}

// cleanWebP writes a WebP's kept chunks under a RIFF header whose size
// is theirs, with the VP8X flags that announced EXIF and XMP cleared.
// Bytes after the RIFF's declared end are left out.
func cleanWebP(w io.Writer, r io.ReaderAt, size int64) error {
	var riff [12]byte
	if _, err := r.ReadAt(riff[:], 0); err != nil {
		return badImage(mimeWebP)
	}
	end := min(size, 8+int64(binary.LittleEndian.Uint32(riff[4:])))
	keep := webpStill
	var first [9]byte
	if _, err := r.ReadAt(first[:], 12); err == nil && string(first[:4]) == "VP8X" && first[8]&0x02 != 0 {
		keep = webpAnimated
	}
	kept, err := riffChunks(r, 12, end, keep)
	if err != nil {
		return err
	}
	total := int64(4) // "WEBP"
	for _, c := range kept {
		total += c.size()
	}
	if total > 1<<32-1 {
		return badImage(mimeWebP)
	}
	binary.LittleEndian.PutUint32(riff[4:], uint32(total))
	if _, err := w.Write(riff[:]); err != nil {
		return err
	}
	return writeChunks(w, r, kept)
}

// writeChunks writes chunks as listed, each with its pad byte.
func writeChunks(w io.Writer, r io.ReaderAt, chunks []riffChunk) error {
	for _, c := range chunks {
		n := c.length()
		hdr := binary.LittleEndian.AppendUint32([]byte(c.id), uint32(n))
		if _, err := w.Write(hdr); err != nil {
			return err
		}
		var err error
		switch c.id {
		case "ANMF":
			if err = copyRange(w, r, c.off, anmfHeader); err == nil {
				err = writeChunks(w, r, c.frame)
			}
		case "VP8X":
			err = writeVP8X(w, r, c)
		default:
			err = copyRange(w, r, c.off, c.n)
		}
		if err != nil {
			return err
		}
		if n&1 == 1 {
			if _, err := w.Write([]byte{0}); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeVP8X writes the extended header without the flags of the
// metadata left out.
func writeVP8X(w io.Writer, r io.ReaderAt, c riffChunk) error {
	b := make([]byte, c.n)
	if _, err := r.ReadAt(b, c.off); err != nil {
		return badImage(mimeWebP)
	}
	if len(b) > 0 {
		b[0] &^= webpMetadataFlags
	}
	_, err := w.Write(b)
	return err
}
