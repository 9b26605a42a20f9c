// Command kschedref runs the upstream kube-scheduler v1.34 framework over a
// cluster described by manifests and prints a ksched-trace/v1 document.
//
// Usage: kschedref [--config FILE] [--feature-gates K=V,...] [--v N] [--replay EVENTS] PATH...
// or: kschedref --feature-gate-table (the table src/config/feature_gates_table.c holds)
// or, for the benchmarks' throughput mode (bench.go): kschedref --bench DIR [--config FILE]
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
	"k8s.io/utils/ptr"
)

func usage() {
	fmt.Fprintf(os.Stderr, "usage: kschedref [--config FILE] [--feature-gates K=V,...] [--v N] [--replay EVENTS] PATH...\n       kschedref --feature-gate-table\n       kschedref --bench DIR [--config FILE] [--v N]\n")
	flag.PrintDefaults()
}

// loadConfig is decodeConfig with every node scored (the trace loop's rule).
func loadConfig(path string) (*config.KubeSchedulerConfiguration, error) {
	cfg, err := decodeConfig(path)
	if err != nil {
		return nil, err
	}
	cfg.PercentageOfNodesToScore = ptr.To[int32](100)
	return cfg, nil
}

// decodeConfig decodes and defaults a KubeSchedulerConfiguration exactly like
// kube-scheduler does (strict decoding, v1 defaults), or returns the defaults.
func decodeConfig(path string) (*config.KubeSchedulerConfiguration, error) {
	var cfg *config.KubeSchedulerConfiguration
	if path == "" {
		c, err := latest.Default()
		if err != nil {
			return nil, err
		}
		cfg = c
	} else {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		obj, gvk, err := scheme.Codecs.UniversalDecoder().Decode(data, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		c, ok := obj.(*config.KubeSchedulerConfiguration)
		if !ok {
			return nil, fmt.Errorf("%s: couldn't decode as KubeSchedulerConfiguration, got %s", path, gvk)
		}
		c.TypeMeta.APIVersion = gvk.GroupVersion().String()
		cfg = c
	}
	if err := validation.ValidateKubeSchedulerConfiguration(cfg); err != nil {
		return nil, fmt.Errorf("invalid configuration: %w", err)
	}
	return cfg, nil
}

func main() {
	var cfgPath, benchDir, replayPath string
	var verbosity int
	var gates []string
	var gateTable bool
	flag.Func("feature-gates", "kube-scheduler's --feature-gates (repeatable)", func(v string) error {
		gates = append(gates, v)
		return nil
	})
	flag.BoolVar(&gateTable, "feature-gate-table", false, "print the feature gate table ksched compiles in")
	flag.StringVar(&benchDir, "bench", "", "throughput mode: run the bench/gen.py workload in DIR")
	flag.StringVar(&replayPath, "replay", "", "event replay mode: replay the steps of this events file (docs/reference-harness.md)")
	flag.StringVar(&cfgPath, "config", "", "KubeSchedulerConfiguration file (default: the v1 defaults)")
	flag.IntVar(&verbosity, "v", -1, "klog verbosity (default: upstream logging off)")
	flag.Usage = usage
	flag.Parse()
	if gateTable {
		if err := writeFeatureGateTable(os.Stdout); err != nil {
			fmt.Fprintf(os.Stderr, "kschedref: %v\n", err)
			os.Exit(1)
		}
		return
	}
	// before anything reads a gate (the configuration's defaults, the
	// plugins): every occurrence joined, as kube-scheduler's flag does
	if len(gates) > 0 {
		if err := setFeatureGates(strings.Join(gates, ",")); err != nil {
			fmt.Fprintf(os.Stderr, "kschedref: %v\n", err)
			os.Exit(1)
		}
	}
	if flag.NArg() == 0 && benchDir == "" {
		usage()
		os.Exit(2)
	}

	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	if verbosity < 0 {
		_ = klogFlags.Set("logtostderr", "false")
		_ = klogFlags.Set("alsologtostderr", "false")
		_ = klogFlags.Set("stderrthreshold", "FATAL")
		klog.SetOutput(io.Discard)
	} else {
		_ = klogFlags.Set("v", fmt.Sprint(verbosity))
	}

	if benchDir != "" {
		cfg, err := decodeConfig(cfgPath)
		if err == nil {
			err = runBench(cfg, benchDir)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "kschedref: %v\n", err)
			os.Exit(1)
		}
		return
	}
	if replayPath != "" {
		if err := runReplay(cfgPath, replayPath, flag.Args()); err != nil {
			fmt.Fprintf(os.Stderr, "kschedref: %v\n", err)
			os.Exit(1)
		}
		return
	}
	if err := run(cfgPath, flag.Args()); err != nil {
		fmt.Fprintf(os.Stderr, "kschedref: %v\n", err)
		os.Exit(1)
	}
}

func run(cfgPath string, paths []string) error {
	cfg, err := loadConfig(cfgPath)
	if err != nil {
		return err
	}
	cluster, err := LoadCluster(paths)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sim, err := NewSim(ctx, cfg, cluster)
	if err != nil {
		return err
	}
	if err := sim.Run(); err != nil {
		return err
	}
	w := bufio.NewWriter(os.Stdout)
	if err := WriteTrace(w, &sim.trace); err != nil {
		return err
	}
	return w.Flush()
}
