#include "admin/api/alarm_channels_api.h"

#include <algorithm>
#include <set>

#include "admin/api/api_errors.h"
#include "admin/api/field_checks.h"
#include "admin/api/json_body.h"
#include "admin/auth/secrets.h"
#include "admin/model/record_json.h"

namespace cronwheel::admin {

namespace {

constexpr std::size_t kMaxName = 64;
constexpr std::size_t kMaxTarget = 2048;
constexpr std::size_t kMinSecret = 16;
constexpr std::size_t kMaxSecret = 256;
constexpr std::size_t kMaxIds = 1000;

std::vector<std::int64_t> checked_ids(JsonBody& body, std::string_view field) {
  auto ids = body.optional_int_list(field).value_or(std::vector<std::int64_t>{});
  if (ids.size() > kMaxIds) {
    throw invalid(field, std::string(field) + ": at most " + std::to_string(kMaxIds) + " ids");
  }
  for (auto id : ids) {
    if (id <= 0) throw invalid(field, std::string(field) + ": ids are positive, got " + std::to_string(id));
  }
  std::set<std::int64_t> unique(ids.begin(), ids.end());
  return {unique.begin(), unique.end()};
}

void check_secret(const std::string& secret) {
  const bool printable = std::all_of(secret.begin(), secret.end(), [](char c) { return c > 0x20 && c < 0x7f; });
  if (secret.size() < kMinSecret || secret.size() > kMaxSecret || !printable) {
    throw invalid("secret", "secret: " + std::to_string(kMinSecret) + " to " + std::to_string(kMaxSecret) +
                                " printable ASCII characters without spaces");
  }
}

AlarmChannel visible(AlarmChannelStore& store, std::int64_t id) {
  auto channel = store.get_channel(id);
  if (!channel) throw not_found("alarm channel " + std::to_string(id) + " does not exist");
  return *channel;
}

nlohmann::json answered(const AlarmChannel& channel, bool with_secret) {
  auto json = to_json(channel);
  if (with_secret) json["secret"] = channel.secret;
  return json;
}

ApiResponse no_store(ApiResponse response) {
  response.headers.emplace_back("Cache-Control", "no-store");
  return response;
}

}  // namespace

AlarmChannel read_channel_body(std::string_view body_text, AlarmChannel channel, ChannelBodyKind kind,
                               bool& secret_changed) {
  secret_changed = false;
  JsonBody body(body_text);
  static const nlohmann::json known = to_json(AlarmChannel{});
  refuse_read_only(body, known, {"name", "kind", "target", "groups", "jobs"});
  const bool create = kind == ChannelBodyKind::kCreate;

  if (create || body.has("name")) {
    channel.name = trimmed(body.required_string("name"));
    check_text("name", channel.name, kMaxName, true);
  }
  if (create || body.has("kind")) {
    const auto text = body.required_string("kind");
    const auto parsed = parse_alarm_channel_kind(text);
    if (!parsed) throw invalid("kind", "kind: expected email or webhook, got '" + truncate_chars(text, 40) + "'");
    if (!create && *parsed != channel.kind && !body.has("target")) {
      throw invalid("target", "target: a channel that changes its kind needs a new target");
    }
    channel.kind = *parsed;
  }
  if (create || body.has("target")) {
    const auto target = body.required_string("target");
    if (channel.kind == AlarmChannelKind::kWebhook) {
      check_http_urls("target", {target});
      channel.target = target;
    } else {
      channel.target = checked_email_list("target", target, kMaxTarget);
      if (channel.target.empty()) throw invalid("target", "target: at least one email address");
    }
  }
  const auto secret = body.optional_string("secret");
  const bool rotate = body.optional_bool("rotateSecret").value_or(false);
  if (channel.kind == AlarmChannelKind::kEmail) {
    if ((secret && !secret->empty()) || rotate) {
      throw invalid("secret", "secret: only webhook channels sign their requests");
    }
    channel.secret.clear();
  } else if (secret && rotate) {
    throw invalid("rotateSecret", "rotateSecret: give a secret or ask for a new one, not both");
  } else if (secret) {
    check_secret(*secret);
    channel.secret = *secret;
    secret_changed = true;
  } else if (rotate || channel.secret.empty()) {  // a new webhook channel gets one
    channel.secret = random_secret(32);
    secret_changed = true;
  }
  if (create || body.has("groups")) channel.groups = checked_ids(body, "groups");
  if (create || body.has("jobs")) channel.jobs = checked_ids(body, "jobs");
  body.finish();
  return channel;
}

void add_alarm_channel_routes(ApiRouter& router, const AlarmChannelRoutes& routes, common::Clock& clock) {
  AlarmChannelStore& store = *routes.store;

  router.add("GET", "alarm-channels", Access::kAdmin, [&store](ApiRouter::RouteContext&, const common::http::Request& req) {
    auto page = page_query(req);
    return ApiResponse{200, sliced_page_json(store.list_channels(), page,
                                             [](const AlarmChannel& c) { return to_json(c); })};
  }, paged({}));

  router.add("POST", "alarm-channels", Access::kAdmin, [&store](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
    bool secret_changed = false;
    auto channel = read_channel_body(req.body, AlarmChannel{}, ChannelBodyKind::kCreate, secret_changed);
    auto created = store.create_channel(channel, ctx.request.actor);
    return no_store(ApiResponse{201, answered(created, secret_changed)});
  });

  router.add("GET", "alarm-channels/{id}", Access::kAdmin, [&store](ApiRouter::RouteContext& ctx, const common::http::Request&) {
    return ApiResponse{200, to_json(visible(store, ctx.path_int("id")))};
  });

  router.add("PUT", "alarm-channels/{id}", Access::kAdmin, [&store](ApiRouter::RouteContext& ctx, const common::http::Request& req) {
    bool secret_changed = false;
    auto channel = read_channel_body(req.body, visible(store, ctx.path_int("id")), ChannelBodyKind::kUpdate,
                                     secret_changed);
    auto updated = store.update_channel(channel, ctx.request.actor);
    return no_store(ApiResponse{200, answered(updated, secret_changed)});
  });

  router.add("DELETE", "alarm-channels/{id}", Access::kAdmin, [&store](ApiRouter::RouteContext& ctx, const common::http::Request&) {
    store.remove_channel(visible(store, ctx.path_int("id")).id, ctx.request.actor);
    return ApiResponse{204, nullptr};
  });

  router.add("POST", "alarm-channels/{id}/test", Access::kAdmin,
             [&store, &clock, delivery = routes.delivery, text_options = routes.text](ApiRouter::RouteContext& ctx,
                                                                                      const common::http::Request&) {
               const auto channel = visible(store, ctx.path_int("id"));
               const auto now = clock.now_ms();
               const auto text = render_test_alarm(channel.name, text_options, now);
               try {
                 delivery->deliver(AlarmDestination::of(channel), text,
                                   test_webhook_body(channel.name, text, text_options, now));
               } catch (const AlarmDelivery::NotConfigured& e) {
                 throw common::http::HttpError(503, kUnavailable, std::string("the test alarm was not sent: ") + e.what());
               } catch (const MailError& e) {
                 throw common::http::HttpError(502, kBadGateway, std::string("the test alarm was not delivered: ") + e.what());
               } catch (const WebhookError& e) {
                 throw common::http::HttpError(502, kBadGateway, std::string("the test alarm was not delivered: ") + e.what());
               }
               return ApiResponse{200, nlohmann::json{{"delivered", true}, {"channel", channel.id}}};
             },
             {}, {.lane = kExecutorCallLane});  // waits on the receiver
}

}  // namespace cronwheel::admin
