/* policy.h -- the decision core: eligibility, ranking and fallback. No I/O. */
#ifndef GVW_POLICY_H
#define GVW_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h" /* text_append: every reason the rules write */
#include "decision_result.h"
#include "device.h"
#include "pod.h"
#include "usage.h"

struct device_reading;

/*
 * Budgets declared as a share of the GPU (HAMi's gpumem-percentage, KAI's
 * gpu-fraction: p_budget_gpus > 0) into MiB, by the device's own total
 * (gpu_memory_total_bytes) of the GPU the pod runs on: the GPUs its series in u
 * name, else the node's GPUs when they are all one size. A pod whose total
 * cannot be known stays BUDGET_BAD with the reason. d NULL = no device query.
 * Pure; the same input gives the same result however often it runs.
 */
void policy_resolve_budgets(struct pod_list *l, const struct usage_reading *u,
                            const struct device_reading *d);

/* Settings that shape a decision (borrowed strings). */
struct policy_params {
    int64_t pp_floor_mib;
    int64_t pp_total_mib;                     /* GPU_TOTAL_MIB */
    int64_t pp_min_runtime_s;                 /* MIN_RUNTIME */
    int pp_fallback_largest;                  /* FALLBACK=largest */
    const char *const *pp_exclude_namespaces; /* EXCLUDE_NAMESPACES */
    size_t pp_exclude_count;
    const char *pp_starving_namespace; /* the alert's namespace label, or NULL */
    int64_t pp_now;                    /* unix seconds, for MIN_RUNTIME */
};

/* What the decision saw. */
struct policy_input {
    const struct pod_list *pi_pods;       /* borrowed */
    const struct usage_reading *pi_usage; /* borrowed */
    int pi_have_free;                     /* FREE_QUERY answered: use pi_free_mib */
    double pi_free_mib;                   /* instead of total - sum(used) */
    const char *pi_gpu; /* borrowed; GPU scope: decide for this GPU (a GPU_LABEL
                           value, see usage_summarise_gpu()); NULL = node scope */
    const struct device_reading *pi_device; /* borrowed; FREE_QUERY=auto: the device
                                query's answer (free and total per GPU), else NULL */
    const struct policy_prep *pi_prep; /* borrowed; GPU scope: this input prepared once
                                by policy_prepare() for all its GPUs; NULL = prepared
                                for this call alone */
};

/*
 * A node's evidence (its used series and its pod list) indexed once for the
 * decisions of its GPUs: with it, one GPU's decision costs that GPU's series
 * and users, so deciding every GPU of a node grows as n log n in the series
 * and pods, never as GPUs x series. From params only GPU_TOTAL_MIB is read. It
 * borrows in's pods, usage and device: keep them alive (and unchanged) while
 * it is used. NULL when out of memory. Free with policy_prep_free() (NULL is
 * a no-op).
 */
struct policy_prep;
struct policy_prep *policy_prepare(const struct policy_params *params,
                                   const struct policy_input *in);
void policy_prep_free(struct policy_prep *p);

/* Where a decision's free VRAM came from (SPEC "Free VRAM", free_source). */
enum free_source {
    FREE_SOURCE_NONE,     /* nothing was read */
    FREE_SOURCE_DEVICE,   /* the device's own gpu_memory_free_bytes */
    FREE_SOURCE_COMPUTED, /* GPU_TOTAL_MIB - sum(used) */
    FREE_SOURCE_QUERY,    /* an explicit FREE_QUERY */
};

/* "device", "computed", "query"; NULL for FREE_SOURCE_NONE. */
const char *free_source_name(enum free_source s);

enum policy_outcome {
    POLICY_VICTIM,               /* pr_victim names the pod to recycle */
    POLICY_SKIPPED_RECOVERED,    /* free >= floor */
    POLICY_SKIPPED_NO_CANDIDATE, /* below floor, nobody to recycle */
    POLICY_SKIPPED_TELEMETRY,    /* the reading cannot be true */
};

/*
 * One pod considered: every pod on the node, plus usage of pods not listed.
 * pc_why_not is the first rule the pod fails, checked in this order:
 * not_on_node, not_running, terminating, mirror_pod, no_controller,
 * excluded_namespace, starving_namespace, protected, too_young (an unknown
 * start time counts as too young), no_budget, bad_budget, within_budget
 * (used == budget is within). The budget rules come last, so FALLBACK=largest
 * can take exactly the pods that fail only those.
 */
struct policy_candidate {
    const struct pod
        *pc_pod;          /* borrowed from the input; NULL for a pod seen only in usage */
    char *pc_namespace;   /* owned copy */
    char *pc_name;        /* owned copy */
    int64_t pc_used_mib;  /* 0 when the pod has no series */
    double pc_used_bytes; /* the exact sum the comparisons and ranking use; in GPU
                             scope summed over every GPU */
    int64_t pc_gpu_used_mib; /* GPU scope: its use on the GPU decided; else pc_used_mib */
    double pc_gpu_used_bytes; /* ... exact: what FALLBACK=largest ranks by */
    int pc_has_budget;        /* budget readable and declared */
    int64_t pc_budget_mib;    /* valid when pc_has_budget */
    int64_t pc_overshoot_mib; /* used - budget; valid when pc_has_budget */
    int pc_eligible;
    const char
        *pc_why_not; /* static: "within_budget", "no_budget", "bad_budget",
                        "protected", "excluded_namespace", "starving_namespace",
                        "too_young", "terminating", "no_controller",
                        "mirror_pod", "not_running", "not_on_node"; NULL if eligible */
};

struct policy_answer {
    enum policy_outcome pr_outcome;
    char pr_reason[512];                    /* one human sentence for the audit */
    int pr_free_known;                      /* free could be computed */
    int64_t pr_free_mib;                    /* free VRAM, rounded down */
    struct policy_candidate *pr_candidates; /* owned; sorted by rank, eligible first */
    size_t pr_candidate_count;
    size_t pr_ranked_count; /* the first pr_ranked_count candidates are victims in
                               order of preference (429 moves to the next);
                               0 unless pr_outcome is POLICY_VICTIM */
    int pr_fallback;        /* the victims came from FALLBACK=largest */
    char pr_free_note[320]; /* "; free computed as GPU_TOTAL_MIB=N - used (why)" when
                               FREE_QUERY=auto fell back, else "": the end of pr_reason,
                               kept apart so a summary can repeat it */
    enum free_source pr_free_source; /* where free came from; set whenever the
                                  reading got as far as choosing (even when it then
                                  proved impossible) */
};

/*
 * Steps 1, 3 and 4 of SPEC "A decision" on what one node reported (or, with
 * pi_gpu, one GPU of it: SPEC "GPU scope"; free, plausibility and the floor
 * are then that GPU's, candidates only the pods using it, over budget by
 * their use on every GPU, FALLBACK=largest ranked by use on that GPU). Never
 * fails: a reading that cannot be true gives POLICY_SKIPPED_TELEMETRY, and so
 * does running out of memory (reason "out of memory", no candidates). res is
 * overwritten, not freed. Candidates are filled for every outcome but
 * SKIPPED_TELEMETRY; the order of pods and series in the input never changes
 * the answer. The caller frees res with policy_answer_free(); res borrows
 * from in, so keep in alive while res is used.
 */
void policy_decide(const struct policy_params *params, const struct policy_input *in,
                   struct policy_answer *res);

/*
 * The rule a pod using used_bytes in total (summed over every GPU) fails, as
 * policy_decide() would give it as a candidate (pc_why_not: a static string),
 * or NULL when it would be eligible. For the seating chart: pods a per-GPU
 * decision never considers (they use no GPU) still get the policy's word.
 */
const char *policy_why_not_pod(const struct policy_params *pp, const struct pod *p,
                               double used_bytes);

/* Frees the candidates; NULL is a no-op. Leaves res empty. */
void policy_answer_free(struct policy_answer *res);

/* A reading at or above the floor, said with what follows ("nothing to do",
 * or why nothing is acted on though the trend was to be judged): "free N MiB[
 * on GPU G] >= floor F MiB; SO" and res's free note, into out. */
void policy_reason_recovered(const struct policy_answer *res, int64_t floor_mib,
                             const char *gpu, const char *so, char *out, size_t len);

/* The decision result an outcome gives when nothing else happens to it: a
 * skipped outcome its own, a victim would_recycle (dry run). */
enum decision_result policy_outcome_result(enum policy_outcome o);

#endif
