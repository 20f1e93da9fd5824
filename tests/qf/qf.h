// qf.h — what the two QuickFIX test engines (qf-initiator, qf-acceptor)
// share: their command line, the run's deadline, and the counters each
// prints in its summary line. The engines themselves are plain QuickFIX
// (Debian's libquickfix), used as any trading firm would: a settings file,
// FileStore and FileLog in a directory, SocketInitiator/SocketAcceptor.
#ifndef TAPLESS_QF_H
#define TAPLESS_QF_H

#include <quickfix/Application.h>
#include <quickfix/Message.h>
#include <quickfix/Session.h>
#include <quickfix/SessionSettings.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

namespace qf {

struct Options {
	std::string settings;	// QuickFIX settings file (the test writes it)
	std::string dir;	// FileLog and FileStore directory
	unsigned long orders = 0;	// BUY orders (a SELL follows each fill)
	double rate = 1000;	// BUY orders per second (initiator)
	double timeout = 60;	// seconds for the whole run
};

[[noreturn]] inline void usage(const char *prog, const char *why)
{
	if (why)
		std::fprintf(stderr, "%s: %s\n", prog, why);
	std::fprintf(stderr, "usage: %s --settings FILE --log-dir DIR "
		     "--orders N [--rate PER_SECOND] [--timeout SECONDS]\n",
		     prog);
	std::exit(2);
}

inline double number(const char *prog, const char *opt, const char *s)
{
	char *end;
	double v = std::strtod(s, &end);

	if (end == s || *end || !(v > 0))
		usage(prog, (std::string(opt) + ": not a positive number: '" +
			     s + "'").c_str());
	return v;
}

inline Options parse(int argc, char **argv)
{
	const char *prog = argv[0];
	Options o;

	if (const char *slash = std::strrchr(prog, '/'))
		prog = slash + 1;
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];

		if (a == "-h" || a == "--help")
			usage(prog, nullptr);
		if (i + 1 >= argc)
			usage(prog, (a + ": unknown option or missing value").c_str());
		const char *v = argv[++i];
		if (a == "--settings")
			o.settings = v;
		else if (a == "--log-dir")
			o.dir = v;
		else if (a == "--orders")
			o.orders = (unsigned long)number(prog, "--orders", v);
		else if (a == "--rate")
			o.rate = number(prog, "--rate", v);
		else if (a == "--timeout")
			o.timeout = number(prog, "--timeout", v);
		else
			usage(prog, (a + ": unknown option").c_str());
	}
	if (o.settings.empty() || o.dir.empty() || !o.orders)
		usage(prog, "--settings, --log-dir and --orders are required");
	return o;
}

inline std::string msg_type(const FIX::Message &m)
{
	return m.getHeader().getField(FIX::FIELD::MsgType);
}

// The application side both engines share: what happened to the session,
// set from QuickFIX's threads and waited for by main, and the rejects
// (35=3 session level, 35=j business level) counted both ways. A clean
// Logout is one where a Logout came from the peer and the session then
// ended (the initiator sends its own first; the acceptor answers it).
// Engines implement app(), QuickFIX's fromApp.
class Engine : public FIX::Application {
public:
	explicit Engine(double timeout_s)
		: deadline(std::chrono::steady_clock::now() +
			   std::chrono::duration_cast<std::chrono::steady_clock::duration>(
				   std::chrono::duration<double>(timeout_s))) {}

	// Wake main's wait() (after a counter changed).
	void changed() { std::lock_guard<std::mutex> l(mu); cv.notify_all(); }

	// Wait until pred() holds; false if the run's deadline passed first.
	template <class Pred> bool wait(Pred pred)
	{
		std::unique_lock<std::mutex> l(mu);
		return cv.wait_until(l, deadline, pred);
	}
	bool clean() const { return logout_received && logged_out; }

	std::atomic<bool> logged_on{false}, logged_out{false};
	std::atomic<bool> logout_received{false};
	std::atomic<unsigned long> rejects_in{0}, rejects_out{0};

protected:
	virtual void app(const FIX::Message &m, const FIX::SessionID &id) = 0;

private:
	void onCreate(const FIX::SessionID &) override {}
	void onLogon(const FIX::SessionID &) override { set(logged_on); }
	void onLogout(const FIX::SessionID &) override { set(logged_out); }
	void toAdmin(FIX::Message &m, const FIX::SessionID &) override { out(m); }

// QuickFIX 1.15's Application declares dynamic exception specifications
// (deprecated since C++11), and an override must repeat them.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated"
	void toApp(FIX::Message &m, const FIX::SessionID &)
		throw(FIX::DoNotSend) override
	{
		out(m);
	}
	void fromAdmin(const FIX::Message &m, const FIX::SessionID &)
		throw(FIX::FieldNotFound, FIX::IncorrectDataFormat,
		      FIX::IncorrectTagValue, FIX::RejectLogon) override
	{
		std::string t = msg_type(m);

		if (t == "3")
			rejects_in++;
		else if (t == "5")
			set(logout_received);
	}
	void fromApp(const FIX::Message &m, const FIX::SessionID &id)
		throw(FIX::FieldNotFound, FIX::IncorrectDataFormat,
		      FIX::IncorrectTagValue, FIX::UnsupportedMessageType) override
	{
		if (msg_type(m) == "j")
			rejects_in++;
		else
			app(m, id);
		changed();
	}
#pragma GCC diagnostic pop

	void out(const FIX::Message &m)
	{
		std::string t = msg_type(m);

		if (t == "3" || t == "j")
			rejects_out++;
	}
	void set(std::atomic<bool> &flag)
	{
		std::lock_guard<std::mutex> l(mu);
		flag = true;
		cv.notify_all();
	}

	const std::chrono::steady_clock::time_point deadline;
	std::mutex mu;
	std::condition_variable cv;
};

// The one session the settings file defines.
inline FIX::SessionID session_id(const FIX::SessionSettings &s)
{
	std::set<FIX::SessionID> ids = s.getSessions();

	if (ids.size() != 1)
		throw FIX::ConfigError("the settings must define exactly one session");
	return *ids.begin();
}

}  // namespace qf

#endif
