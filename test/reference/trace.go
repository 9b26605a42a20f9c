package main

// The ksched-trace/v1 output format (see docs/reference-harness.md).

import (
	"bytes"
	"encoding/json"
	"io"

	fwk "k8s.io/kube-scheduler/framework"
)

const traceFormat = "ksched-trace/v1"

// Trace is the whole output document.
type Trace struct {
	Format   string    `json:"format"`
	Attempts []Attempt `json:"attempts"`
}

// PluginStatus is a non-success status and the plugin that returned it.
type PluginStatus struct {
	Plugin  string   `json:"plugin,omitempty"`
	Code    string   `json:"code"`
	Reasons []string `json:"reasons,omitempty"`
}

// NodeFilter is the filter verdict for one node.
type NodeFilter struct {
	Node    string   `json:"node"`
	Plugin  string   `json:"plugin,omitempty"`
	Code    string   `json:"code"`
	Reasons []string `json:"reasons,omitempty"`
}

// PluginScore is one score plugin's contribution on one node.
type PluginScore struct {
	Plugin     string `json:"plugin"`
	Raw        int64  `json:"raw"`
	Normalized int64  `json:"normalized"`
	Weighted   int64  `json:"weighted"`
}

// NodeScore is the score breakdown for one feasible node.
type NodeScore struct {
	Node    string        `json:"node"`
	Plugins []PluginScore `json:"plugins"`
	Total   int64         `json:"total"`
}

// PostFilter is what the PostFilter extension point did.
type PostFilter struct {
	Plugin        string   `json:"plugin,omitempty"`
	Code          string   `json:"code"`
	NominatedNode string   `json:"nominatedNode,omitempty"`
	Victims       []string `json:"victims,omitempty"`
	Message       string   `json:"message,omitempty"`
}

// Attempt is one scheduling attempt of one pod.
type Attempt struct {
	Pass       int           `json:"pass"`
	Pod        string        `json:"pod"`
	Nominated  string        `json:"nominated,omitempty"`
	PreEnqueue *PluginStatus `json:"preenqueue,omitempty"`
	PreFilter  *PluginStatus `json:"prefilter,omitempty"`
	Filter     []NodeFilter  `json:"filter,omitempty"`
	Scores     []NodeScore   `json:"scores,omitempty"`
	Result     string        `json:"result"`
	Node       string        `json:"node,omitempty"`
	Message    string        `json:"message,omitempty"`
	PostFilter *PostFilter   `json:"postfilter,omitempty"`
	// DRA: the devices the pod's claims hold once it is bound,
	// "ns/claim: request driver/pool/device".
	Devices []string `json:"devices,omitempty"`
}

const (
	ResultScheduled       = "Scheduled"
	ResultUnschedulable   = "Unschedulable"
	ResultSchedulingGated = "SchedulingGated"
	ResultError           = "Error"
)

func statusOf(plugin string, s *fwk.Status) *PluginStatus {
	reasons := s.Reasons()
	return &PluginStatus{Plugin: plugin, Code: s.Code().String(), Reasons: append([]string(nil), reasons...)}
}

// WriteTrace writes the trace as one JSON document: one attempt per line.
func WriteTrace(w io.Writer, t *Trace) error {
	if _, err := io.WriteString(w, `{"format":"`+t.Format+`","attempts":[`); err != nil {
		return err
	}
	for i := range t.Attempts {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(&t.Attempts[i]); err != nil {
			return err
		}
		b := bytes.TrimRight(buf.Bytes(), "\n")
		sep := ",\n"
		if i == 0 {
			sep = "\n"
		}
		if _, err := io.WriteString(w, sep); err != nil {
			return err
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, "\n]}\n")
	return err
}
