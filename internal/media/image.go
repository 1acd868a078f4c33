package media

import (
	"encoding/binary"
	"fmt"
	"image"
	_ "image/gif" // registers the decoders image.DecodeConfig uses
	_ "image/jpeg"
	_ "image/png"
	"io"

	_ "golang.org/x/image/webp"

	"github.com/socialgw/gateway/internal/social"
)

// inspectImage reads an image's header only (image.DecodeConfig decodes
// no pixels) and refuses a canvas over maxPixels before anything would
// decode it.
func inspectImage(r io.ReaderAt, size int64, mime string, maxPixels int64) (File, error) {
	cfg, format, err := image.DecodeConfig(io.NewSectionReader(r, 0, size))
	if err != nil || "image/"+format != mime {
		return File{}, refuse(fmt.Sprintf("looks like %s but its header does not decode", mime))
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return File{}, refuse("is an image without pixels")
	}
	if maxPixels > 0 && int64(cfg.Width)*int64(cfg.Height) > maxPixels {
		return File{}, refuse(fmt.Sprintf("is an image of %d×%d pixels, more than the %d allowed", cfg.Width, cfg.Height, maxPixels))
	}
	return File{Kind: social.Image, MIME: mime, Width: cfg.Width, Height: cfg.Height}, nil
}

// Clean writes the copy of a checked file that is stored: images without
// the metadata that can locate or identify a person, the pixels untouched
// (no re-encoding); MP3 as its audio frames only, without the ID3 tags
// that carry names, comments and pictures; GIF and other audio as sent (a
// GIF holds no EXIF or XMP; its comment extensions are left). It returns
// the bytes written.
func Clean(w io.Writer, r io.ReaderAt, size int64, mime string) (int64, error) {
	cw := &countWriter{w: w}
	var err error
	switch mime {
	case mimeJPEG:
		err = cleanJPEG(cw, r, size)
	case mimePNG:
		err = cleanPNG(cw, r, size)
	case mimeWebP:
		err = cleanWebP(cw, r, size)
	case mimeMP3:
		err = cleanMP3(cw, r, size)
	default:
		_, err = io.Copy(cw, io.NewSectionReader(r, 0, size))
	}
	return cw.n, err
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// copyRange copies r[off:off+n] to w.
func copyRange(w io.Writer, r io.ReaderAt, off, n int64) error {
	_, err := io.Copy(w, io.NewSectionReader(r, off, n))
	return err
}

// cleanJPEG copies a JPEG's segments up to the scan, leaving out APP1
// (EXIF, with GPS, and XMP) and APP13 (Photoshop IPTC), then the scan and
// everything after it as they are.
func cleanJPEG(w io.Writer, r io.ReaderAt, size int64) error {
	if _, err := w.Write([]byte{0xff, 0xd8}); err != nil {
		return err
	}
	off := int64(2)
	var hdr [4]byte
	for off+4 <= size {
		if _, err := r.ReadAt(hdr[:], off); err != nil {
			return badImage(mimeJPEG)
		}
		if hdr[0] != 0xff {
			return badImage(mimeJPEG)
		}
		marker := hdr[1]
		switch {
		case marker == 0xff: // fill byte
			off++
			continue
		case marker == 0x01 || marker >= 0xd0 && marker <= 0xd7: // no length
			if _, err := w.Write(hdr[:2]); err != nil {
				return err
			}
			off += 2
			continue
		case marker == 0xda || marker == 0xd9: // start of scan, end of image
			return copyRange(w, r, off, size-off)
		}
		n := int64(binary.BigEndian.Uint16(hdr[2:]))
		if n < 2 || off+2+n > size {
			return badImage(mimeJPEG)
		}
		if marker != 0xe1 && marker != 0xed {
			if err := copyRange(w, r, off, 2+n); err != nil {
				return err
			}
		}
		off += 2 + n
	}
	return badImage(mimeJPEG)
}

// Chunks of PNG that hold metadata: EXIF (eXIf) and text (tEXt, zTXt,
// iTXt, where XMP lives).
var pngDropped = map[string]bool{"eXIf": true, "tEXt": true, "zTXt": true, "iTXt": true}

// cleanPNG copies a PNG's chunks but the metadata ones.
func cleanPNG(w io.Writer, r io.ReaderAt, size int64) error {
	if err := copyRange(w, r, 0, 8); err != nil {
		return err
	}
	var hdr [8]byte
	for off := int64(8); off < size; {
		if _, err := r.ReadAt(hdr[:], off); err != nil {
			return badImage(mimePNG)
		}
		n := 12 + int64(binary.BigEndian.Uint32(hdr[:4])) // length, type, data, CRC
		if off+n > size {
			return badImage(mimePNG)
		}
		if !pngDropped[string(hdr[4:8])] {
			if err := copyRange(w, r, off, n); err != nil {
				return err
			}
		}
		off += n
		if string(hdr[4:8]) == "IEND" {
			return nil
		}
	}
	return badImage(mimePNG)
}

// cleanWebP copies a WebP's RIFF chunks but EXIF and XMP, with the RIFF
// size and the VP8X flags that announce them corrected.
func cleanWebP(w io.Writer, r io.ReaderAt, size int64) error {
	type chunk struct {
		off, n int64
		id     string
	}
	var kept []chunk
	var hdr [8]byte
	total := int64(4) // "WEBP"
	for off := int64(12); off+8 <= size; {
		if _, err := r.ReadAt(hdr[:], off); err != nil {
			return badImage(mimeWebP)
		}
		n := 8 + int64(binary.LittleEndian.Uint32(hdr[4:]))
		n += n & 1 // chunks are padded to an even size
		if off+n > size {
			n = size - off // a last chunk without its pad byte
		}
		if id := string(hdr[:4]); id != "EXIF" && id != "XMP " {
			kept = append(kept, chunk{off, n, id})
			total += n
		}
		off += n
	}
	var riff [12]byte
	copy(riff[:], "RIFF")
	binary.LittleEndian.PutUint32(riff[4:], uint32(total))
	copy(riff[8:], "WEBP")
	if _, err := w.Write(riff[:]); err != nil {
		return err
	}
	for _, c := range kept {
		if c.id != "VP8X" || c.n < 9 {
			if err := copyRange(w, r, c.off, c.n); err != nil {
				return err
			}
			continue
		}
		b := make([]byte, c.n)
		if _, err := r.ReadAt(b, c.off); err != nil {
			return badImage(mimeWebP)
		}
		b[8] &^= 0x08 | 0x04 // the EXIF and XMP flags
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

func badImage(mime string) error { return refuse("is a damaged " + mime + " image") }
