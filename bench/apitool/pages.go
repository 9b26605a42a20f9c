package main

// apitool list -pages: a list read in pages (limit=N, continue tokens), as
// one after the other (-pipeline=false) or with the next page asked for as
// soon as the current one's ListMeta (at the start of the answer) has
// given its continue token (-pipeline): the API server then prepares page
// k+1 while it sends page k.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// pbVarint reads a varint at b[i:]; n is 0 when b ends first.
func pbVarint(b []byte, i int) (v uint64, n int) {
	for s := uint(0); i+n < len(b) && s < 64; s += 7 {
		c := b[i+n]
		n++
		v |= uint64(c&0x7f) << s
		if c < 0x80 {
			return v, n
		}
	}
	return 0, 0
}

var errMore = errors.New("more bytes needed")

// listMeta finds a protobuf list answer's ListMeta (k8s magic, Unknown{1:
// typeMeta, 2: raw = List{1: ListMeta, ...}}) in its first bytes and
// returns its resourceVersion and continue token.
func listMeta(b []byte) (rv, cont string, err error) {
	if len(b) < 4 {
		return "", "", errMore
	}
	if string(b[:4]) != "k8s\x00" {
		return "", "", fmt.Errorf("not a protobuf answer")
	}
	i := 4
	field := func(b []byte, i int) (num uint64, val []byte, raw int, next int, err error) {
		tag, n := pbVarint(b, i)
		if n == 0 {
			return 0, nil, 0, 0, errMore
		}
		i += n
		if tag&7 != 2 {
			return 0, nil, 0, 0, fmt.Errorf("unexpected wire type %d", tag&7)
		}
		l, m := pbVarint(b, i)
		if m == 0 {
			return 0, nil, 0, 0, errMore
		}
		i += m
		return tag >> 3, nil, int(l), i, nil
	}
	for {
		num, _, l, j, err := field(b, i)
		if err != nil {
			return "", "", err
		}
		if num != 2 {
			if j+l > len(b) {
				return "", "", errMore
			}
			i = j + l
			continue
		}
		// raw: the list; its first field is ListMeta
		num, _, ml, k, err := field(b, j)
		if err != nil {
			return "", "", err
		}
		if num != 1 {
			return "", "", fmt.Errorf("list without ListMeta first")
		}
		if k+ml > len(b) {
			return "", "", errMore
		}
		md := b[k : k+ml]
		for p := 0; p < len(md); {
			tag, n := pbVarint(md, p)
			p += n
			if tag&7 == 0 {
				_, n = pbVarint(md, p)
				p += n
				continue
			}
			fl, n := pbVarint(md, p)
			p += n
			v := string(md[p : p+int(fl)])
			p += int(fl)
			switch tag >> 3 {
			case 2:
				rv = v
			case 3:
				cont = v
			}
		}
		return rv, cont, nil
	}
}

// open asks for one page: the answer's headers, its body still to read.
func (c *client) open(path, accept string) (*http.Response, error) {
	req, _ := http.NewRequest("GET", c.server+path, nil)
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", accept)
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return nil, fmt.Errorf("%s: %d %s", path, resp.StatusCode, b)
	}
	return resp, nil
}

type opened struct {
	resp *http.Response
	err  error
	at   time.Time
}

// cmdListPages lists path (without limit/continue) in pages of limit, read
// in order as a reflector reads them. With pipeline, page k+1 is asked for
// as soon as page k's ListMeta is in (its body then waits in the
// transport's stream window until page k is read); without, once page k
// is read to its end.
func cmdListPages(c *client, path, accept string, limit int, pipeline bool) {
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	base := path + sep + "limit=" + fmt.Sprint(limit)
	ask := func(cont string) chan opened {
		p := base
		if cont != "" {
			p += "&continue=" + url.QueryEscape(cont)
		}
		ch := make(chan opened, 1)
		go func() {
			r, err := c.open(p, accept)
			ch <- opened{r, err, time.Now()}
		}()
		return ch
	}
	t0 := time.Now()
	var first time.Duration
	var total int64
	pages := 0
	var waitFirst time.Duration // summed time from a page's request to its headers, as seen by the reader
	cur := ask("")
	buf := make([]byte, 1<<20)
	for cur != nil {
		tw := time.Now()
		o := <-cur
		waitFirst += time.Since(tw)
		if o.err != nil {
			fatal("list: %v", o.err)
		}
		if pages == 0 {
			first = o.at.Sub(t0)
		}
		pages++
		var next chan opened
		head := make([]byte, 0, 4096)
		known, cont := false, ""
		for {
			k, err := o.resp.Body.Read(buf)
			total += int64(k)
			if !known {
				head = append(head, buf[:k]...)
				_, ct, perr := listMeta(head)
				if perr == nil {
					known, cont = true, ct
					if pipeline && cont != "" {
						next = ask(cont)
					}
				} else if perr != errMore {
					fatal("list: %v", perr)
				}
			}
			if err != nil {
				if err != io.EOF {
					fatal("list: %v", err)
				}
				break
			}
		}
		o.resp.Body.Close()
		if !known {
			fatal("list: an answer without ListMeta")
		}
		if !pipeline && cont != "" {
			next = ask(cont)
		}
		cur = next
	}
	last := time.Since(t0)
	json.NewEncoder(os.Stdout).Encode(map[string]any{"code": 200, "first_byte_s": first.Seconds(),
		"last_byte_s": last.Seconds(), "bytes": total, "pages": pages, "limit": limit, "pipeline": pipeline,
		"reader_waited_s": waitFirst.Seconds()})
}

// cmdWatchList reads path's objects as a watch's initial events
// (sendInitialEvents=true, the WatchList way client-go can take) until the
// bookmark that ends them: the API server's other way to give a client a
// consistent snapshot.
func cmdWatchList(c *client, path, accept string) {
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	p := path + sep + "allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true"
	t0 := time.Now()
	resp, err := c.open(p, accept)
	if err != nil {
		fatal("watchlist: %v", err)
	}
	first := time.Since(t0)
	var total int64
	events := 0
	hdr := make([]byte, 4)
	frame := make([]byte, 0, 1<<16)
	for {
		if _, err := io.ReadFull(resp.Body, hdr); err != nil {
			fatal("watchlist: %v after %d events", err, events)
		}
		n := int(hdr[0])<<24 | int(hdr[1])<<16 | int(hdr[2])<<8 | int(hdr[3])
		if cap(frame) < n {
			frame = make([]byte, n)
		}
		frame = frame[:n]
		if _, err := io.ReadFull(resp.Body, frame); err != nil {
			fatal("watchlist: %v", err)
		}
		total += int64(4 + n)
		events++
		if eventType(frame) == "BOOKMARK" {
			break
		}
	}
	resp.Body.Close()
	last := time.Since(t0)
	json.NewEncoder(os.Stdout).Encode(map[string]any{"code": 200, "first_byte_s": first.Seconds(),
		"last_byte_s": last.Seconds(), "bytes": total, "events": events - 1})
}

// eventType: a protobuf watch frame's WatchEvent.type (the frame is a raw
// WatchEvent{1: type, 2: object}), "" when not found.
func eventType(b []byte) string {
	t, k := pbVarint(b, 0)
	if k == 0 || t != 0x0a {
		return ""
	}
	tl, k2 := pbVarint(b, k)
	s := k + k2
	if k2 == 0 || s+int(tl) > len(b) {
		return ""
	}
	return string(b[s : s+int(tl)])
}
