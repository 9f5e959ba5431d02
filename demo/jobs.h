/* jobs.h: a small job system for kcc_world_desc's task hooks, as an engine would give one: each
 * task's items are split into one range per worker and every range runs on a thread of its own
 * (started for the task, joined by finish_task). kcc-replay --workers N and the world-trace tests
 * replay with it; a world step's results must not depend on it. Header-only; uses pthreads. */
#ifndef KCC_DEMO_JOBS_H
#define KCC_DEMO_JOBS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "kcc.h"

#define DEMO_JOBS_MAX 64

typedef struct demo_job_range {
    kcc_task_fn *task;
    void        *context;
    uint32_t     begin, end, worker;
    bool         threaded;   ///< runs on thread[worker] (joined by finish_task)
} demo_job_range;

/// The job system's state: the user_task_context of the world's desc. One task in flight.
typedef struct demo_jobs {
    uint32_t       workers;   ///< 1..DEMO_JOBS_MAX
    pthread_t      thread[DEMO_JOBS_MAX];
    demo_job_range range[DEMO_JOBS_MAX];
    uint32_t       ranges;    ///< ranges of the task in flight
} demo_jobs;

static void *demo_jobs_run(void *arg)
{
    demo_job_range *r = arg;
    r->task(r->begin, r->end, r->worker, r->context);
    return NULL;
}

/// enqueue_task: ranges of ceil(count / workers) items (at least min_range), one thread each;
/// the last range runs on the calling thread. NULL (all done) when a thread cannot be started.
static void *demo_jobs_enqueue(kcc_task_fn *task, uint32_t count, uint32_t min_range,
                               void *task_context, void *user_context)
{
    demo_jobs *jobs = user_context;
    uint32_t per = (count + jobs->workers - 1) / jobs->workers;
    per = per < min_range ? min_range : per;
    jobs->ranges = 0;
    for (uint32_t begin = 0, w = 0; begin < count; ++w) {
        const uint32_t end = count - begin > per ? begin + per : count;
        demo_job_range r = {task, task_context, begin, end, w, false};
        jobs->range[w] = r;
        jobs->ranges = w + 1;
        jobs->range[w].threaded = end < count && pthread_create(&jobs->thread[w], NULL,
                                                                demo_jobs_run, &jobs->range[w]) == 0;
        if (!jobs->range[w].threaded)
            task(begin, end, w, task_context);   // the last range, or no thread: run it here
        begin = end;
    }
    return jobs;
}

/// finish_task: joins the task's threads.
static void demo_jobs_finish(void *user_task, void *user_context)
{
    (void)user_context;
    demo_jobs *jobs = user_task;
    for (uint32_t w = 0; w < jobs->ranges; ++w)
        if (jobs->range[w].threaded)
            pthread_join(jobs->thread[w], NULL);
    jobs->ranges = 0;
}

#endif
