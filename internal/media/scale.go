package media

import (
	"bytes"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"

	"golang.org/x/image/draw"
	"golang.org/x/image/webp"
)

// Profile pictures are scaled, so they are re-encoded: the copies hold
// only pixels, whatever the original held. The original itself is kept
// as Clean writes it.

// Still decodes the first frame of an image that Clean wrote (f as
// Inspect found it): an animation's first frame, a still's pixels. A
// decoder's panic on hostile input is a refusal.
func Still(r io.Reader, f File) (m image.Image, err error) {
	defer func() {
		if recover() != nil {
			m, err = nil, badImage(f.MIME)
		}
	}()
	switch f.MIME {
	case mimeJPEG:
		m, err = jpeg.Decode(r)
	case mimePNG:
		m, err = png.Decode(r)
	case mimeGIF:
		m, err = gif.Decode(r)
	case mimeWebP:
		m, err = webp.Decode(r)
	default:
		return nil, refuse("is not an image (JPEG, PNG, WebP, GIF)")
	}
	if err != nil {
		// The animated WebP Clean accepts is one x/image/webp does not
		// decode as a still.
		return nil, refuse(fmt.Sprintf("is a %s image whose first frame does not decode as a still picture", f.MIME))
	}
	return m, nil
}

// Square crops the centre square of m and scales it to side pixels
// (never enlarging: a smaller square keeps its own side).
func Square(m image.Image, side int) *image.RGBA {
	b := m.Bounds()
	n := min(b.Dx(), b.Dy())
	src := image.Rect(b.Min.X+(b.Dx()-n)/2, b.Min.Y+(b.Dy()-n)/2, 0, 0)
	src.Max = src.Min.Add(image.Pt(n, n))
	side = min(side, n)
	return scaleTo(m, src, side, side)
}

// FitWidth scales m to at most width pixels wide and as many high,
// keeping its proportions (never enlarging).
func FitWidth(m image.Image, width int) *image.RGBA {
	b := m.Bounds()
	w, h := b.Dx(), b.Dy()
	if w > width || h > width {
		if w >= h {
			w, h = width, max(1, h*width/w)
		} else {
			w, h = max(1, w*width/h), width
		}
	}
	return scaleTo(m, b, w, h)
}

// scaleTo draws src of m into a new w×h image with Catmull-Rom
// resampling (golang.org/x/image/draw).
func scaleTo(m image.Image, src image.Rectangle, w, h int) *image.RGBA {
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.CatmullRom.Scale(dst, dst.Bounds(), m, src, draw.Src, nil)
	return dst
}

// Encode writes m as JPEG (quality 85) when it is opaque and as PNG when
// it is not, and returns the type written.
func Encode(w io.Writer, m *image.RGBA) (string, error) {
	if m.Opaque() {
		return mimeJPEG, jpeg.Encode(w, m, &jpeg.Options{Quality: 85})
	}
	return mimePNG, png.Encode(w, m)
}

// EncodeBytes is Encode into memory.
func EncodeBytes(m *image.RGBA) ([]byte, string, error) {
	var b bytes.Buffer
	mime, err := Encode(&b, m)
	if err != nil {
		return nil, "", fmt.Errorf("encode %s: %w", mime, err)
	}
	return b.Bytes(), mime, nil
}
