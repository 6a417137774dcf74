# cronwheel-admin (with the web console) and cronwheel-executor on Debian 12, built from
# Debian's packages and the console's locked npm packages only.
#   docker build -t cronwheel .
# docker-compose.yml runs the production-like topology with this image.

FROM debian:12 AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      g++ cmake make pkg-config \
      libpqxx-dev libboost1.81-dev libcpp-httplib-dev nlohmann-json3-dev libhowardhinnant-date-dev \
      libcli11-dev libspdlog-dev libsodium-dev prometheus-cpp-dev libcurl4-openssl-dev \
      libbrotli-dev libmariadb-dev libyaml-cpp-dev libical-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCRONWHEEL_BUILD_TESTS=OFF \
 && cmake --build build -j"$(nproc)" --target cronwheel-admin cronwheel-executor

# The web console, built with Debian's Node.js (18); only its built files reach the image.
FROM debian:12 AS console
RUN apt-get update \
 && apt-get install -y --no-install-recommends nodejs npm \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY openapi.yaml ./
COPY web/package.json web/package-lock.json web/
RUN cd web && npm ci --no-audit --no-fund
COPY web/ web/
RUN cd web && npm run build -- --outDir /console --emptyOutDir

FROM debian:12-slim
# Runtime libraries of the two binaries; bash and python3 for script jobs, curl for health
# checks, tzdata for the jobs' time zones.
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      libpqxx-6.4 libcpp-httplib0.11 libdate-tz3 libspdlog1.10 libsodium23 libprometheus-cpp-core1.0 libcurl4 \
      libbrotli1 libyaml-cpp0.7 libical3 \
      tzdata ca-certificates curl bash python3 \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --create-home --home-dir /var/lib/cronwheel cronwheel
COPY --from=build /src/build/bin/cronwheel-admin /src/build/bin/cronwheel-executor /usr/local/bin/
# Where cronwheel-admin in /usr/local/bin looks for the console by default.
COPY --from=console /console /usr/local/share/cronwheel/web
USER cronwheel
WORKDIR /var/lib/cronwheel
EXPOSE 8080 9999
CMD ["cronwheel-admin"]
