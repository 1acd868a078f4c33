package media

import (
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

// Clean writes the copy of a checked file (f, as Inspect found it) that
// is stored: only the parts of the file its decoder needs, so nothing
// that can locate or identify a person (EXIF, XMP, IPTC, comments, text,
// tags, a second image) is kept, and nothing is re-encoded. Images keep
// an allow-list of their parts (jpeg.go, png.go, webp.go, gif.go); MP3
// and ADTS AAC their whole frames; Ogg Opus its stream with an empty
// comment packet (ogg.go); M4A its movie without user data (m4a.go).
// An image is decoded as it is written, from the bytes written, its
// frames together within maxPixels: one that does not decode is refused
// (BAD_USER_INPUT), and what was written must then be discarded. It
// returns the bytes written.
func Clean(w io.Writer, r io.ReaderAt, size int64, f File, maxPixels int64) (int64, error) {
	cw := &countWriter{w: w}
	var strip func(io.Writer, io.ReaderAt, int64) error
	switch f.MIME {
	case mimeJPEG:
		strip = cleanJPEG
	case mimePNG:
		strip = cleanPNG
	case mimeWebP:
		strip = cleanWebP
	case mimeMP3:
		strip = cleanMP3
	case mimeOgg:
		strip = cleanOgg
	case mimeM4A:
		strip = cleanM4A
	case mimeAAC:
		strip = cleanADTS
	case mimeGIF:
		strip = func(w io.Writer, r io.ReaderAt, size int64) error { return cleanGIF(w, r, size, maxPixels) }
	default:
		return 0, fmt.Errorf("clean %s: not a type Inspect accepts", f.MIME)
	}
	write := func(w io.Writer) error { return strip(w, r, size) }
	var err error
	if f.Kind != social.Image {
		err = write(cw)
	} else {
		err = decodeWritten(cw, write, f, maxPixels)
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

func badImage(mime string) error { return refuse("is a damaged " + mime + " image") }
