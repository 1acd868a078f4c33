package media

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"

	"golang.org/x/image/webp"
)

// errDecoded stops a write once the decoder has given up on it.
var errDecoded = errors.New("media: the decoder stopped reading")

// decodeWritten runs write with a writer that copies to w and to an
// image decoder, so what is decoded is exactly what is stored. A write
// error wins (a refusal of the file's structure, or the store's own
// failure); otherwise the decoder's refusal is returned.
func decodeWritten(w io.Writer, write func(io.Writer) error, f File, maxPixels int64) error {
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := decodeSafely(pr, f, maxPixels)
		if err == nil {
			_, err = io.Copy(io.Discard, pr) // nothing follows the image: EOF
		}
		pr.CloseWithError(errDecoded)
		done <- err
	}()
	werr := write(io.MultiWriter(w, pw))
	pw.CloseWithError(werr) // nil: the decoder reads EOF
	derr := <-done
	if werr != nil && !errors.Is(werr, errDecoded) {
		return werr
	}
	return derr
}

// decodeSafely is decodeImage, a decoder's panic on hostile input
// turned into a refusal: it runs on a goroutine of its own, where a panic
// would end the process.
func decodeSafely(r io.Reader, f File, maxPixels int64) (err error) {
	defer func() {
		if recover() != nil {
			err = badImage(f.MIME)
		}
	}()
	return decodeImage(r, f, maxPixels)
}

// decodeImage decodes a whole image from r, whose header Inspect read as
// f's: its pixels, of the size the header claims.
func decodeImage(r io.Reader, f File, maxPixels int64) error {
	var m image.Image
	var err error
	switch f.MIME {
	case mimeJPEG:
		m, err = jpeg.Decode(r)
	case mimePNG:
		m, err = png.Decode(r)
	case mimeGIF:
		var g *gif.GIF
		if g, err = gif.DecodeAll(r); err == nil && len(g.Image) > 0 {
			m = image.Rect(0, 0, g.Config.Width, g.Config.Height) // the decoder keeps frames within it
		}
	case mimeWebP:
		br := bufio.NewReader(r)
		if head, _ := br.Peek(21); len(head) == 21 && string(head[12:16]) == "VP8X" && head[20]&0x02 != 0 {
			return decodeWebPFrames(br, f, maxPixels)
		}
		m, err = webp.Decode(br)
	default:
		return fmt.Errorf("decode %s: not an image this package decodes", f.MIME)
	}
	if err != nil || m == nil {
		return refuse(fmt.Sprintf("is a damaged %s image: its pixels do not decode", f.MIME))
	}
	if b := m.Bounds(); b.Dx() != f.Width || b.Dy() != f.Height {
		return badImage(f.MIME)
	}
	return nil
}

// decodeWebPFrames decodes each frame of an animated WebP on its own,
// each within the canvas and all of them together within maxPixels (an
// animation of many full-canvas frames costs as much as that many
// images).
func decodeWebPFrames(r io.Reader, f File, maxPixels int64) error {
	var hdr [12]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return badImage(mimeWebP)
	}
	var pixels int64
	frames := 0
	for {
		if _, err := io.ReadFull(r, hdr[:8]); err == io.EOF {
			break
		} else if err != nil {
			return badImage(mimeWebP)
		}
		n := int64(binary.LittleEndian.Uint32(hdr[4:8]))
		if string(hdr[:4]) != "ANMF" {
			if _, err := io.CopyN(io.Discard, r, n+n&1); err != nil {
				return badImage(mimeWebP)
			}
			continue
		}
		frame := make([]byte, n+n&1)
		if _, err := io.ReadFull(r, frame); err != nil || n < anmfHeader {
			return badImage(mimeWebP)
		}
		frame = frame[:n]
		px, err := decodeWebPFrame(frame, f)
		if err != nil {
			return err
		}
		frames++
		if pixels += px; maxPixels > 0 && pixels > maxPixels {
			return tooManyFramePixels(maxPixels)
		}
	}
	if frames == 0 {
		return badImage(mimeWebP)
	}
	return nil
}

// decodeWebPFrame decodes one ANMF frame's payload, as a still WebP whose
// VP8X header gives the frame's size, and returns its pixel count.
func decodeWebPFrame(frame []byte, f File) (int64, error) {
	u24 := func(b []byte) int { return int(b[0]) | int(b[1])<<8 | int(b[2])<<16 }
	x, y := 2*u24(frame[0:]), 2*u24(frame[3:])
	w, h := u24(frame[6:])+1, u24(frame[9:])+1
	if x+w > f.Width || y+h > f.Height {
		return 0, refuse("is an animated WebP with a frame outside its canvas")
	}
	data := frame[anmfHeader:]
	vp8x := make([]byte, 10)
	if len(data) >= 4 && string(data[:4]) == "ALPH" {
		vp8x[0] = 0x10
	}
	copy(vp8x[4:], frame[6:12]) // width-1, height-1
	still := append([]byte("WEBPVP8X\x0a\x00\x00\x00"), vp8x...)
	still = append(still, data...)
	still = append(binary.LittleEndian.AppendUint32([]byte("RIFF"), uint32(len(still))), still...)
	m, err := webp.Decode(bytes.NewReader(still))
	if err != nil {
		return 0, refuse("is a damaged image/webp image: a frame's pixels do not decode")
	}
	if b := m.Bounds(); b.Dx() != w || b.Dy() != h {
		return 0, badImage(mimeWebP)
	}
	return int64(w) * int64(h), nil
}

func tooManyFramePixels(maxPixels int64) error {
	return refuse(fmt.Sprintf("is an animation of more than %d pixels in all its frames", maxPixels))
}
