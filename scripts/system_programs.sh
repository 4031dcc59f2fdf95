# The system programs SafeClaw's tests and stack use, sourced by ./safeclaw and
# scripts/install_system_packages.sh: `missing_system_packages` fills `need` with the Debian/Ubuntu
# packages of those missing, with bash builtins only (./safeclaw runs it on every start).
missing_system_packages() {
  need=()
  command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
  command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || need+=(chromium)
  command -v chromedriver >/dev/null 2>&1 || need+=(chromium-driver)
  # docker-compose: the stack tests check docker-compose.yml with `docker-compose config` (offline).
  command -v docker-compose >/dev/null 2>&1 || need+=(docker-compose)
}
