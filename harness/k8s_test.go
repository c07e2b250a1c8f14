package harness

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// manifestKinds are the Kubernetes objects docs/k8s may hold, each with
// the API type it must decode into.
var manifestKinds = map[schema.GroupVersionKind]func() any{
	appsv1.SchemeGroupVersion.WithKind("Deployment"): func() any { return new(appsv1.Deployment) },
	batchv1.SchemeGroupVersion.WithKind("Job"):       func() any { return new(batchv1.Job) },
	corev1.SchemeGroupVersion.WithKind("ConfigMap"):  func() any { return new(corev1.ConfigMap) },
	corev1.SchemeGroupVersion.WithKind("Service"):    func() any { return new(corev1.Service) },
}

// checkManifests decodes every document of a manifest strictly into its
// Kubernetes API type: an unknown or misspelled field, a field of the
// wrong type or an unknown kind is an error naming the document.
func checkManifests(name string, data []byte) (kinds []string, _ error) {
	r := k8syaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var errs []error
	for i := 1; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return kinds, fmt.Errorf("%s: document %d: %w", name, i, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &head); err != nil {
			errs = append(errs, fmt.Errorf("%s: document %d: %w", name, i, err))
			continue
		}
		gv, err := schema.ParseGroupVersion(head.APIVersion)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: document %d: %w", name, i, err))
			continue
		}
		newObj, ok := manifestKinds[gv.WithKind(head.Kind)]
		if !ok {
			errs = append(errs, fmt.Errorf("%s: document %d: found %s %s; expected one of the kinds docs/k8s uses", name, i, head.APIVersion, head.Kind))
			continue
		}
		if err := yaml.UnmarshalStrict(doc, newObj()); err != nil {
			errs = append(errs, fmt.Errorf("%s: document %d (%s): %w", name, i, head.Kind, err))
			continue
		}
		kinds = append(kinds, head.Kind)
	}
	return kinds, errors.Join(errs...)
}

// TestKubernetesManifests: every manifest docs/kubernetes.md ships decodes
// strictly into the Kubernetes API types, so a misspelled field or a wrong
// kind fails here rather than in a user's cluster.
func TestKubernetesManifests(t *testing.T) {
	paths, err := filepath.Glob("../docs/k8s/*.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no manifests in docs/k8s: %v", err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		kinds, err := checkManifests(filepath.Base(p), data)
		if err != nil {
			t.Error(err)
		}
		if !strings.Contains(strings.Join(kinds, " "), "Job") {
			t.Errorf("%s: kinds %v; expected the indexed Job docs/kubernetes.md describes", p, kinds)
		}
	}
}

// TestKubernetesManifestsStrict: the check refuses what a cluster would.
func TestKubernetesManifestsStrict(t *testing.T) {
	for name, tc := range map[string]struct{ doc, want string }{
		"misspelled field": {"apiVersion: batch/v1\nkind: Job\nspec:\n  completionz: 4\n", `unknown field "completionz"`},
		"wrong type":       {"apiVersion: batch/v1\nkind: Job\nspec:\n  completions: four\n", "completions"},
		"unknown kind":     {"apiVersion: batch/v1\nkind: Jobb\n", "found batch/v1 Jobb"},
		"second document":  {"apiVersion: v1\nkind: Service\n---\napiVersion: v1\nkind: ConfigMap\ndatta: {}\n", "document 2 (ConfigMap)"},
	} {
		if _, err := checkManifests("m.yaml", []byte(tc.doc)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want an error with %q", name, err, tc.want)
		}
	}
}
