package media

import (
	"bufio"
	"encoding/binary"
	"io"
)

// GIF block introducers and extension labels.
const (
	gifExtension = 0x21
	gifImage     = 0x2c
	gifTrailer   = 0x3b
	gifControl   = 0xf9 // graphic control: delay, disposal, transparency
	gifApp       = 0xff
)

// cleanGIF writes a GIF's header, screen descriptor and colour table,
// its frames (graphic control extensions, image descriptors, colour
// tables, image data) and the looping extension (NETSCAPE2.0,
// ANIMEXTS1.0); comment, plain text and other application extensions
// (XMP, ICC) are left out, and nothing after the trailer is kept. The
// frames' pixels together may be at most maxPixels, checked before a
// frame is written, so the decoder reading the copy never holds more.
func cleanGIF(w io.Writer, r io.ReaderAt, size, maxPixels int64) error {
	br := bufio.NewReader(io.NewSectionReader(r, 0, size))
	bw := bufio.NewWriter(w)
	head := make([]byte, 13)
	if _, err := io.ReadFull(br, head); err != nil {
		return badImage(mimeGIF)
	}
	if err := copyTable(bw, br, head, head[10]); err != nil {
		return err
	}
	var pixels int64
	for {
		b, err := br.ReadByte()
		if err != nil {
			return badImage(mimeGIF)
		}
		switch b {
		case gifTrailer:
			if err := bw.WriteByte(b); err != nil {
				return err
			}
			return bw.Flush()
		case gifExtension:
			err = gifExtensionBlock(bw, br)
		case gifImage:
			err = gifFrame(bw, br, &pixels, maxPixels)
		default:
			return badImage(mimeGIF)
		}
		if err != nil {
			return err
		}
	}
}

// copyTable writes head, then the colour table that its packed field
// announces.
func copyTable(w io.Writer, br *bufio.Reader, head []byte, packed byte) error {
	n := 0
	if packed&0x80 != 0 {
		n = 3 << (packed&7 + 1)
	}
	table := make([]byte, n)
	if _, err := io.ReadFull(br, table); err != nil {
		return badImage(mimeGIF)
	}
	if _, err := w.Write(head); err != nil {
		return err
	}
	_, err := w.Write(table)
	return err
}

// gifSubBlocks reads data sub-blocks up to their terminator, raw.
func gifSubBlocks(br *bufio.Reader) ([]byte, error) {
	var out []byte
	for {
		n, err := br.ReadByte()
		if err != nil {
			return nil, badImage(mimeGIF)
		}
		out = append(out, n)
		if n == 0 {
			return out, nil
		}
		block := make([]byte, n)
		if _, err := io.ReadFull(br, block); err != nil {
			return nil, badImage(mimeGIF)
		}
		out = append(out, block...)
	}
}

// gifByteAndBlocks reads a byte (an extension's label, a frame's LZW
// code size) and the data sub-blocks after it.
func gifByteAndBlocks(br *bufio.Reader) (byte, []byte, error) {
	b, err := br.ReadByte()
	if err != nil {
		return 0, nil, badImage(mimeGIF)
	}
	data, err := gifSubBlocks(br)
	return b, data, err
}

// gifExtensionBlock reads an extension and writes it when kept.
func gifExtensionBlock(w io.Writer, br *bufio.Reader) error {
	label, data, err := gifByteAndBlocks(br)
	if err != nil {
		return err
	}
	loop := len(data) >= 12 && data[0] == 11 && (string(data[1:12]) == "NETSCAPE2.0" || string(data[1:12]) == "ANIMEXTS1.0")
	if label != gifControl && !(label == gifApp && loop) {
		return nil
	}
	return writeAll(w, []byte{gifExtension, label}, data)
}

// writeAll writes each of bs in turn.
func writeAll(w io.Writer, bs ...[]byte) error {
	for _, b := range bs {
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// gifFrame reads an image descriptor, its colour table and its data, and
// writes them once the frame's pixels are within what is left of the
// budget.
func gifFrame(w io.Writer, br *bufio.Reader, pixels *int64, maxPixels int64) error {
	desc := make([]byte, 10)
	desc[0] = gifImage
	if _, err := io.ReadFull(br, desc[1:]); err != nil {
		return badImage(mimeGIF)
	}
	fw, fh := binary.LittleEndian.Uint16(desc[5:]), binary.LittleEndian.Uint16(desc[7:])
	if *pixels += int64(fw) * int64(fh); maxPixels > 0 && *pixels > maxPixels {
		return tooManyFramePixels(maxPixels)
	}
	if err := copyTable(w, br, desc, desc[9]); err != nil {
		return err
	}
	lzw, data, err := gifByteAndBlocks(br) // LZW minimum code size
	if err != nil {
		return err
	}
	return writeAll(w, []byte{lzw}, data)
}
