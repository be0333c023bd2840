#!/usr/bin/env python3
"""Writes a synthetic shipshape.yaml of N workloads for the benchmarks.

    benches/synth.py N > shipshape.yaml

The spec has an api, a jobs workload and a migrate hook Job (3 workloads), then pools
and workers in turn until there are N: every pool owns two locked scheduled jobs, the
jobs workload keeps four more. Every workload opens two PostgreSQL allocations and two
Redis allocations (one per server: critical and cache); the budgets are large enough
for every preset. Presets: `all-pools` (every pool on), `half-pools` (every second
pool on, two pods of the api and of every worker, shared stores on Redis),
`workers-off` (every worker off) and the built-in
`scale-out`. Deterministic: the same N gives the same bytes.

    benches/synth.py N --stated > shipshape.yaml

adds `startupSettings` with the api as `sizesFrom`: the api's four allocations are
stated in the configuration file, so every other workload's allocation of the same
name takes the api's size (the migrate hook's `main` is then 4, like everyone's). Real
charts state their pools this way (the LLM gateway example does).

Only the Python standard library; the output is YAML in flow style (plain JSON
scalars), so no YAML library is needed.
"""

import json
import sys


# The startup settings of `--stated`: the api's allocations are stated to every process.
STARTUP_SETTINGS = """startupSettings:
  section: app
  sizesFrom: api
  cacheUrlKey: redis_cache_url
  foreground:
    lock: {key: db_lock_timeout_seconds, seconds: 0.2}
    statement: {key: db_statement_timeout_seconds, seconds: 1.0}
    transaction: {key: db_transaction_timeout_seconds, seconds: 2.0}
  background:
    lock: {key: db_background_lock_timeout_seconds, seconds: 1.0}
    statement: {key: db_background_statement_timeout_seconds, seconds: 5.0}
    transaction: {key: db_background_transaction_timeout_seconds, seconds: 10.0}
  deadlines:
    acquisition: {key: db_acquisition_timeout_seconds, seconds: 0.2}
"""


def allocations(prefix, stated=False):
    def setting(key):
        return f", setting: {key}" if stated else ""

    return (
        "      postgres:\n"
        f"        main: {{size: 4, env: {prefix}_DB_POOL_SIZE{setting('db_pool_size')}}}\n"
        f"        reporting: {{size: 2, env: {prefix}_REPORTING_POOL_SIZE{setting('db_reporting_pool_size')}}}\n"
        "      redis:\n"
        f"        critical: {{size: 8, server: critical, env: {prefix}_REDIS_CRITICAL{setting('redis_critical_max_connections')}}}\n"
        f"        cache: {{size: 4, server: cache, env: {prefix}_REDIS_CACHE{setting('redis_cache_max_connections')}}}\n"
    )


def main():
    args = sys.argv[1:]
    stated = "--stated" in args
    if stated:
        args.remove("--stated")
    if len(args) != 1 or not args[0].isdigit() or int(args[0]) < 5:
        sys.exit("usage: benches/synth.py N [--stated]   (N >= 5 workloads)")
    n = int(args[0])
    rest = n - 3
    pools = (rest + 1) // 2
    workers = rest // 2
    out = []
    w = out.append
    flag = " --stated" if stated else ""
    w(f"# A synthetic spec of {n} workloads (benches/synth.py {n}{flag}): an api, jobs, migrate,\n")
    w(f"# {pools} pools of two jobs each and {workers} workers.\n")
    w("chart:\n")
    w(f"  name: synth-{n}\n")
    w("  version: 0.1.0\n")
    w('  appVersion: "1.0.0"\n')
    w(f"  description: A synthetic platform of {n} workloads\n")
    w("image:\n  repository: registry.example.com/synth/app\n")
    w("configFile:\n  name: app.yaml\n  mountPath: /etc/app\n")
    w("config:\n  app:\n    name: synth\n")
    if stated:
        w(STARTUP_SETTINGS)
    w("stores:\n")
    w("  sessions: {class: shared, env: APP_SESSION_STORE}\n")
    w("  rate-limits: {class: shared, env: APP_RATE_LIMIT_STORE}\n")
    w("  orders: {class: durable}\n")
    w("storeRedis:\n  url: redis://valkey:6379\n")
    w("managedEnv:\n")
    w("  replicaMode: APP_REPLICA_MODE\n")
    w("  replicaStrict: APP_REPLICA_STRICT\n")
    w("  redisUrl: APP_REDIS_URL\n")
    w("  schedulingPool: APP_SCHEDULING_POOL\n")
    w("  offloadedPools: APP_SCHEDULING_OFFLOADED_POOLS\n")
    w("  skipJobs: APP_SCHEDULING_SKIP\n")
    w("  keepJobs: APP_SCHEDULING_KEEP\n")
    w("  leaderElection: APP_LEADER_ELECTION\n")
    w("scheduling:\n  jobs:\n")
    for j in range(4):
        w(f"    - {{name: CoreJob{j}, locked: true}}\n")
    for p in range(pools):
        w(f"    - {{name: Pool{p}JobA, locked: true}}\n")
        w(f"    - {{name: Pool{p}JobB, locked: true}}\n")
    w("  pools:\n")
    for p in range(pools):
        w(f"    pool-{p}:\n      jobs: [Pool{p}JobA, Pool{p}JobB]\n")
    w("dependencyCapacity:\n")
    w("  retiringGenerations: 1\n")
    w("  postgres:\n    maxConnections: 100000000\n    reserve: 20\n")
    w("  redis:\n    maxConnections: 200000000\n    servers:\n")
    w("      critical: {maxClients: 100000000, role: critical, maxmemoryPolicy: noeviction}\n")
    w("      cache: {maxClients: 100000000, role: cache, maxmemoryPolicy: allkeys-lru}\n")
    w("workloads:\n")
    w("  api:\n    api:\n      port: 8080\n")
    w("      drainSeconds: 30\n      terminationGracePeriodSeconds: 60\n")
    w("      resources:\n        requests: {cpu: 500m, memory: 1Gi}\n        limits: {memory: 2Gi}\n")
    w(allocations("API", stated))
    w("  jobs:\n    jobs:\n")
    w(allocations("JOBS"))
    w("  pool:\n")
    for p in range(pools):
        w(f"    pool-{p}:\n      enabled: false\n")
        w("      env:\n        - name: APP_PROFILE\n")
        w(f"          value: {json.dumps('pool-' + str(p))}\n")
        w(allocations("POOL"))
    w("  worker:\n")
    for k in range(workers):
        w(f"    worker-{k}:\n")
        w(f"      args: [{json.dumps('--queue=q' + str(k))}]\n")
        w("      resources:\n        requests: {cpu: 250m, memory: 512Mi}\n")
        w(allocations("WORKER"))
    w("  migrate:\n    migrate:\n")
    w('      args: ["--migrate"]\n')
    w(f"      postgres:\n        main: {{size: {4 if stated else 2}, env: MIGRATE_DB_POOL_SIZE}}\n")
    w("presets:\n")
    w("  all-pools:\n    description: Every pool in its own Deployment.\n    values:\n      workloads:\n")
    for p in range(pools):
        w(f"        pool-{p}: {{enabled: true}}\n")
    w("  half-pools:\n    description: Every second pool on, two pods of the api and of every worker.\n")
    w("    sharedStoreBackend: redis\n    values:\n      workloads:\n")
    w("        api: {replicaCount: 2}\n")
    for k in range(workers):
        w(f"        worker-{k}: {{replicaCount: 2}}\n")
    for p in range(0, pools, 2):
        w(f"        pool-{p}: {{enabled: true}}\n")
    w("  workers-off:\n    description: Every worker off.\n    values:\n      workloads:\n")
    for k in range(workers):
        w(f"        worker-{k}: {{enabled: false}}\n")
    w("  scale-out:\n    builtin: true\n")
    sys.stdout.write("".join(out))


if __name__ == "__main__":
    main()
