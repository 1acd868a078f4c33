package media

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
)

// JPEG markers the walker tells apart.
const (
	jpegSOI  = 0xd8
	jpegEOI  = 0xd9
	jpegSOS  = 0xda
	jpegDQT  = 0xdb
	jpegDRI  = 0xdd
	jpegDHT  = 0xc4
	jpegAPP0 = 0xe0
	jpegAPP2 = 0xe2
	jpegAPPE = 0xee // APP14
)

// cleanJPEG writes the first image of a JPEG with only what decoding it
// needs: SOI, DQT, DHT, SOF, DRI, each SOS with its entropy-coded data,
// and EOI, plus APP0 JFIF (without its thumbnail), APP14 Adobe (the
// colour transform) and APP2 ICC_PROFILE. Every other segment (APP1 EXIF
// and XMP, APP13 IPTC, other APP2 such as MPF, COM, the rest) is left out
// wherever it sits, and nothing after the first EOI is kept: a second
// image (MPF's previews and depth maps) goes with its own metadata.
func cleanJPEG(w io.Writer, r io.ReaderAt, size int64) error {
	br := bufio.NewReader(io.NewSectionReader(r, 0, size))
	var soi [2]byte
	if _, err := io.ReadFull(br, soi[:]); err != nil || soi != [2]byte{0xff, jpegSOI} {
		return badImage(mimeJPEG)
	}
	bw := bufio.NewWriter(w)
	if _, err := bw.Write(soi[:]); err != nil {
		return err
	}
	m, err := jpegMarker(br)
	for err == nil && m != jpegEOI {
		var scan bool
		if scan, err = jpegSegment(bw, br, m); err != nil {
			return err
		}
		if scan {
			m, err = copyScan(bw, br)
		} else {
			m, err = jpegMarker(br)
		}
	}
	if err != nil {
		return err
	}
	if _, err := bw.Write([]byte{0xff, jpegEOI}); err != nil {
		return err
	}
	return bw.Flush()
}

// jpegSegment reads the segment of marker m and writes what is kept of
// it; scan reports a start of scan, whose data follows.
func jpegSegment(w io.Writer, br *bufio.Reader, m byte) (scan bool, err error) {
	if m == jpegSOI {
		return false, badImage(mimeJPEG)
	}
	if m == 0x01 || m >= 0xd0 && m <= 0xd7 { // TEM, RSTn: no length, nothing to keep
		return false, nil
	}
	payload, err := jpegPayload(br)
	if err != nil {
		return false, err
	}
	keep, ok := jpegKept(m, payload)
	if !ok {
		return false, nil
	}
	return m == jpegSOS, writeSegment(w, m, keep)
}

// jpegMarker reads up to and including the next marker and returns its
// code, skipping fill bytes (0xff) and, as decoders do, stray bytes
// between segments.
func jpegMarker(br *bufio.Reader) (byte, error) {
	for {
		b, err := br.ReadByte()
		if err != nil {
			return 0, badImage(mimeJPEG)
		}
		if b != 0xff {
			continue
		}
		for b == 0xff {
			if b, err = br.ReadByte(); err != nil {
				return 0, badImage(mimeJPEG)
			}
		}
		if b != 0 {
			return b, nil
		}
	}
}

// jpegPayload reads a segment's length and the payload after it.
func jpegPayload(br *bufio.Reader) ([]byte, error) {
	var l [2]byte
	if _, err := io.ReadFull(br, l[:]); err != nil {
		return nil, badImage(mimeJPEG)
	}
	n := int(binary.BigEndian.Uint16(l[:]))
	if n < 2 {
		return nil, badImage(mimeJPEG)
	}
	p := make([]byte, n-2)
	if _, err := io.ReadFull(br, p); err != nil {
		return nil, badImage(mimeJPEG)
	}
	return p, nil
}

// jpegKept returns what is kept of a segment's payload, and whether the
// segment is kept at all.
func jpegKept(m byte, p []byte) ([]byte, bool) {
	switch {
	case m == jpegDQT, m == jpegDHT, m == jpegDRI, m == jpegSOS:
		return p, true
	case m >= 0xc0 && m <= 0xcf && m != 0xc8 && m != 0xcc: // SOFn; C4 is DHT, C8 and CC are not frames
		return p, true
	case m == jpegAPP0 && len(p) >= 14 && bytes.HasPrefix(p, []byte("JFIF\x00")):
		j := append([]byte(nil), p[:14]...)
		j[12], j[13] = 0, 0 // no thumbnail: it may show what the picture was cropped from
		return j, true
	case m == jpegAPPE && len(p) >= 12 && bytes.HasPrefix(p, []byte("Adobe")):
		return p[:12], true
	case m == jpegAPP2 && bytes.HasPrefix(p, []byte("ICC_PROFILE\x00")):
		return p, true
	}
	return nil, false
}

func writeSegment(w io.Writer, m byte, p []byte) error {
	h := []byte{0xff, m, 0, 0}
	binary.BigEndian.PutUint16(h[2:], uint16(len(p)+2))
	if _, err := w.Write(h); err != nil {
		return err
	}
	_, err := w.Write(p)
	return err
}

// copyScan copies a scan's entropy-coded data (stuffed 0xff00 and the
// restart markers RST0–7 are part of it) and returns the marker that
// ends it, read.
func copyScan(w io.Writer, br *bufio.Reader) (byte, error) {
	for {
		data, err := br.ReadSlice(0xff)
		if errors.Is(err, bufio.ErrBufferFull) {
			if _, err := w.Write(data); err != nil {
				return 0, err
			}
			continue
		}
		if err != nil {
			return 0, badImage(mimeJPEG)
		}
		// data is only valid until the next read: write it first.
		if _, err := w.Write(data[:len(data)-1]); err != nil {
			return 0, err
		}
		next, err := br.ReadByte()
		if err != nil {
			return 0, badImage(mimeJPEG)
		}
		switch {
		case next == 0 || next >= 0xd0 && next <= 0xd7:
			if _, err := w.Write([]byte{0xff, next}); err != nil {
				return 0, err
			}
			continue
		case next == 0xff: // fill before a marker
			_ = br.UnreadByte()
			continue
		}
		return next, nil
	}
}
